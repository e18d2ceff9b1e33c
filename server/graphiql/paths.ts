/**
 * Where the package root is. This folder runs from source (`server/graphiql/`, under tsx and
 * jest) and compiled (`dist/server/graphiql/`), so the root is two or three levels up. An
 * installed package has `dist/` but no `server/` at its root.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export function packageRoot(): string {
  const candidates = [join(__dirname, '..', '..'), join(__dirname, '..', '..', '..')];
  const found = candidates.find(
    (dir) =>
      existsSync(join(dir, 'package.json')) && (existsSync(join(dir, 'server')) || existsSync(join(dir, 'dist'))),
  );
  return found ?? candidates[0]!;
}

/** `scripts/build-graphiql.ts` writes here (beside the compiled handler) at `npm run build`. */
export function defaultAssetsDir(): string {
  return join(packageRoot(), 'dist', 'server', 'graphiql', 'assets');
}

export function defaultReadmePath(): string {
  return join(packageRoot(), 'README.md');
}
