/**
 * Compiles the in-memory benchmark's reference servers (bench/jit-server.ts,
 * bench/apollo-jit-server.ts) into the gateway's bench build (`.bench-build/bench/`, next to the
 * compiled `adapters/` and `server/` they import) with the same TypeScript options, so they run as
 * plain JavaScript like the gateway, not under tsx's transpile (which costs both CPU).
 * Call it after `startBuiltGateway`, which creates the build.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { root } from './processes';

/** The reference servers, by the name of their source in bench/ (the Apollo one imports the other). */
const REFERENCE_SERVERS = ['jit-server', 'apollo-jit-server'] as const;
export type ReferenceServer = (typeof REFERENCE_SERVERS)[number];

/** Compiles every reference server; returns each compiled server's path. */
export function buildReferenceServers(): Record<ReferenceServer, string> {
  const dir = join(root, '.bench-build', 'bench');
  mkdirSync(dir, { recursive: true });
  const paths = {} as Record<ReferenceServer, string>;
  for (const name of REFERENCE_SERVERS) {
    const { outputText } = ts.transpileModule(readFileSync(join(root, 'bench', `${name}.ts`), 'utf8'), {
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        esModuleInterop: true,
        strict: true,
      },
      fileName: `${name}.ts`,
    });
    writeFileSync((paths[name] = join(dir, `${name}.js`)), outputText);
  }
  return paths;
}
