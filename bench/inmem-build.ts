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

/** The reference servers, by the name of their source in bench/. */
export type ReferenceServer = 'jit-server' | 'apollo-jit-server';

/** Compiles `name` (and, for the Apollo one, the jit server it imports); returns the compiled server's path. */
export function buildReferenceServer(name: ReferenceServer): string {
  mkdirSync(join(root, '.bench-build', 'bench'), { recursive: true });
  for (const file of name === 'jit-server' ? [name] : ['jit-server', name]) {
    const source = readFileSync(join(root, 'bench', `${file}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, strict: true },
      fileName: `${file}.ts`,
    });
    writeFileSync(join(root, '.bench-build', 'bench', `${file}.js`), outputText);
  }
  return join(root, '.bench-build', 'bench', `${name}.js`);
}
