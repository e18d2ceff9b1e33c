/**
 * `npm start` builds only when the build's inputs changed (scripts/build-stamp.ts), on a repo
 * laid out like this one in a temp folder: an edit, a checkout that writes an older file of the
 * same size, an added or deleted source and a dependency install all count; nothing else does.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BUILD_OUTPUTS, beginBuild, buildIsCurrent, endBuild } from '../../scripts/build-stamp';

describe('build stamp', () => {
  let root: string;
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  /** A build as `npm run build` runs it: prebuild, the outputs, postbuild. */
  const build = (): void => {
    beginBuild(root);
    for (const f of BUILD_OUTPUTS) write(f, 'built');
    endBuild(root);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'vg-stamp-'));
    write('tsconfig.build.json', JSON.stringify({ include: ['server', 'schema'] }));
    write('package.json', '{}');
    write('server/main.ts', 'export const a = 1;\n');
    write('schema/volume.graphql', 'type Query { a: Int }\n');
    write('node_modules/.package-lock.json', '{}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('should want a build when there is none, and not after one', () => {
    expect(buildIsCurrent(root)).toBe(false);
    build();
    expect(buildIsCurrent(root)).toBe(true);
  });

  it('should want a build after a source is edited, even to a file of the same size with an older mtime (git checkout, tar)', () => {
    build();
    write('server/main.ts', 'export const b = 1;\n');
    expect(buildIsCurrent(root)).toBe(false);
    build();
    const old = new Date(statSync(join(root, 'server/main.ts')).mtimeMs - 86_400_000);
    utimesSync(join(root, 'server/main.ts'), old, old);
    expect(buildIsCurrent(root)).toBe(false);
  });

  it('should want a build after a source is added or deleted, or the dependencies are installed again', () => {
    build();
    write('server/new.ts', 'export {};\n');
    expect(buildIsCurrent(root)).toBe(false);
    build();
    unlinkSync(join(root, 'schema/volume.graphql'));
    expect(buildIsCurrent(root)).toBe(false);
    build();
    write('node_modules/.package-lock.json', '{"changed":true}');
    expect(buildIsCurrent(root)).toBe(false);
  });

  it('should want a build when a build failed halfway or its output is gone, and ignore files outside the inputs', () => {
    beginBuild(root); // a failed build never reaches endBuild
    for (const f of BUILD_OUTPUTS) write(f, 'built');
    expect(buildIsCurrent(root)).toBe(false);
    build();
    write('docs/notes.md', 'not an input');
    write('test/a.test.ts', 'not an input');
    expect(buildIsCurrent(root)).toBe(true);
    unlinkSync(join(root, BUILD_OUTPUTS[0]!));
    expect(buildIsCurrent(root)).toBe(false);
  });

  it('should note the inputs before the build starts: a file saved during the build makes the next start build again', () => {
    beginBuild(root);
    write('server/main.ts', 'export const saved = "during the build";\n');
    for (const f of BUILD_OUTPUTS) write(f, 'built');
    endBuild(root);
    expect(buildIsCurrent(root)).toBe(false);
  });
});
