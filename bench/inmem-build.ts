/**
 * Compiles bench/jit-server.ts into the gateway's bench build (`.bench-build/bench/`, next to the
 * compiled `adapters/` it imports) with the same TypeScript options, so the reference server runs
 * as plain JavaScript like the gateway, not under tsx's transpile (which costs both CPU).
 * Call it after `startBuiltGateway`, which creates the build.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { root } from './processes';

/** The compiled reference server's path. */
export function buildJitServer(): string {
  const out = join(root, '.bench-build', 'bench', 'jit-server.js');
  const source = readFileSync(join(root, 'bench', 'jit-server.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, strict: true },
    fileName: 'jit-server.ts',
  });
  mkdirSync(join(root, '.bench-build', 'bench'), { recursive: true });
  writeFileSync(out, outputText);
  return out;
}
