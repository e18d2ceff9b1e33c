/**
 * Builds only when the build's inputs changed, for `npm start` in the repo. `npm run build` always
 * builds; its pre/post steps record what it was built from in `dist/.build-stamp`.
 *
 *   node --import tsx scripts/build-stamp.ts begin    (prebuild: clear dist/, note the inputs)
 *   node --import tsx scripts/build-stamp.ts end      (postbuild: the build succeeded, stamp it)
 *   node --import tsx scripts/build-stamp.ts ensure   (npm start: build when the stamp differs)
 *
 * The fingerprint is every input's path, size and mtime (no reading of contents, so it takes a
 * few milliseconds). `git pull`, a checkout or an install writes the files it changes, so their
 * mtimes move; added and deleted files change the list itself. Inputs are noted before the build
 * starts, so a file saved during a build makes the next start build again.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..');
const stampPath = (root: string): string => join(root, 'dist', '.build-stamp');
const pendingPath = (root: string): string => join(root, 'dist', '.build-stamp.pending');

/** Files outside the compiled folders that change what the build writes. */
const EXTRA_INPUTS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build-graphiql.ts',
  'scripts/build-live.ts',
  'scripts/build-stamp.ts',
  // npm rewrites it on every install: a dependency change (GraphiQL, esbuild, TypeScript) rebuilds.
  'node_modules/.package-lock.json',
];

/** What the build must have written for a start to work. */
export const BUILD_OUTPUTS = [
  'dist/server/main.js',
  'dist/server/graphiql/assets/manifest.json',
  'dist/server/live/assets/manifest.json',
];

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') walk(path, out);
    } else if (e.isFile()) out.push(path);
  }
}

/** The compiled folders, from tsconfig.build.json's `include` (one list, not two). */
function compiledFolders(root: string): string[] {
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  return config.include;
}

/** A hash of every build input's relative path, size and mtime, under the repo at `root`. */
export function sourceFingerprint(root = ROOT): string {
  const files: string[] = [];
  for (const folder of compiledFolders(root)) {
    const path = join(root, folder);
    if (existsSync(path)) walk(path, files);
  }
  for (const f of EXTRA_INPUTS) if (existsSync(join(root, f))) files.push(join(root, f));
  const hash = createHash('sha256');
  for (const f of files.map((p) => relative(root, p)).sort()) {
    const s = statSync(join(root, f));
    hash.update(`${f}\t${s.size}\t${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Before a build: clears dist/ and notes the inputs it is built from. */
export function beginBuild(root = ROOT): void {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(pendingPath(root), `${sourceFingerprint(root)}\n`);
}

/** After a successful build: stamps dist/ with the inputs noted when it began. */
export function endBuild(root = ROOT): void {
  if (existsSync(pendingPath(root))) renameSync(pendingPath(root), stampPath(root));
}

/** Whether dist/ holds a finished build of the current inputs. */
export function buildIsCurrent(root = ROOT): boolean {
  if (!existsSync(stampPath(root)) || BUILD_OUTPUTS.some((f) => !existsSync(join(root, f)))) return false;
  return readFileSync(stampPath(root), 'utf8').trim() === sourceFingerprint(root);
}

function main(command: string | undefined): number {
  switch (command) {
    case 'begin':
      beginBuild();
      return 0;
    case 'end':
      endBuild();
      return 0;
    case 'ensure': {
      if (buildIsCurrent()) return 0;
      console.log('Sources changed since the last build (or no build yet): building.');
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      return spawnSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' }).status ?? 1;
    }
    default:
      console.error('usage: build-stamp.ts begin|end|ensure');
      return 2;
  }
}

if (require.main === module) process.exit(main(process.argv[2]));
