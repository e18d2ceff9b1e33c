/** The repository's tracked files, and references in them to files outside it (test/docs/self-contained.test.ts). */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './source-imports';

/** Everything not tracked that a walk would find (a checkout without `.git` has no `git ls-files`). */
const UNTRACKED = new Set(['node_modules', 'dist', '.git']);

function walk(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (UNTRACKED.has(e.name)) return [];
    return e.isDirectory() ? walk(p) : [p];
  });
}

/** Repo-relative paths of the tracked files (`git ls-files`; without git, every file but node_modules/ and dist/). */
export function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\0')
      .filter((f) => f !== '' && statSync(join(root, f), { throwIfNoEntry: false })?.isFile());
  } catch {
    return walk('');
  }
}

/**
 * What points outside the repository: the wire-reference notes and fixtures the code was first
 * written against, which lived in a folder named "shared" beside the clone (its docs/ and
 * fixtures/, the folder itself, the notes' file name), and the scripts that recorded the
 * transcripts, which were never part of it.
 */
const OUTSIDE = [
  /\bbackends\.md\b/,
  /\.\.\/shared\b/,
  /(?<![\w.-])shared\/(?:docs|fixtures|hooks)\b/,
  /\btools\/real-cinder\b/,
];

/** A line of a file that refers to something outside the repository. */
export interface OutsideReference {
  line: number;
  text: string;
}

/** The lines of `file` (or of `text`, when given) that refer to a file outside the repository. */
export function outsideReferences(file: string, text?: string): OutsideReference[] {
  let source = text;
  if (source === undefined) {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) return []; // binary
    source = bytes.toString('utf8');
  }
  return source
    .split('\n')
    .flatMap((l, i) => (OUTSIDE.some((re) => re.test(l)) ? [{ line: i + 1, text: l.trim().slice(0, 160) }] : []));
}
