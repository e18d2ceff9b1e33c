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
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const PENDING = join(DIST, '.build-stamp.pending');

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
const OUTPUTS = ['dist/server/main.js', 'dist/server/graphiql/assets/manifest.json', 'dist/server/live/assets/manifest.json'];

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') walk(path, out);
    } else if (e.isFile()) out.push(path);
  }
}

/** The compiled folders, from tsconfig.build.json's `include` (one list, not two). */
function compiledFolders(): string[] {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  return config.include;
}

/** A hash of every build input's relative path, size and mtime. */
export function sourceFingerprint(): string {
  const files: string[] = [];
  for (const folder of compiledFolders()) {
    const path = join(ROOT, folder);
    if (existsSync(path)) walk(path, files);
  }
  for (const f of EXTRA_INPUTS) if (existsSync(join(ROOT, f))) files.push(join(ROOT, f));
  const hash = createHash('sha256');
  for (const f of files.map((p) => relative(ROOT, p)).sort()) {
    const s = statSync(join(ROOT, f));
    hash.update(`${f}\t${s.size}\t${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Whether dist/ holds a finished build of the current inputs. */
export function buildIsCurrent(): boolean {
  if (!existsSync(STAMP) || OUTPUTS.some((f) => !existsSync(join(ROOT, f)))) return false;
  return readFileSync(STAMP, 'utf8').trim() === sourceFingerprint();
}

function main(command: string | undefined): number {
  switch (command) {
    case 'begin':
      rmSync(DIST, { recursive: true, force: true });
      mkdirSync(DIST, { recursive: true });
      writeFileSync(PENDING, `${sourceFingerprint()}\n`);
      return 0;
    case 'end':
      if (existsSync(PENDING)) renameSync(PENDING, STAMP);
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
