/**
 * The repository stands alone (issue 28, part 3): a clone has nothing beside it, so no tracked
 * file may point at a file outside it. Wire behaviour is cited from its public upstream source
 * (Nomad's, Cinder's or Nova's source file, API reference or spec; docs/upstream.md lists what
 * was read, at which commit) or from a document inside the repository. Fixtures name where they
 * came from.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { outsideReferences, trackedFiles } from '../support/repo-files';
import { root } from '../support/source-imports';

/** Where a reference to the outside is the point, each with why. */
const ALLOWED: Readonly<Record<string, string>> = {
  '.ci/run': 'checks that nothing (no shared folder) sits beside the isolated clone',
};

describe('the repository refers to nothing outside it', () => {
  const tracked = trackedFiles();

  it('should find no reference to the old shared notes or fixtures, or to a script that is not here', () => {
    expect(tracked.length).toBeGreaterThan(500);
    const found = tracked
      .filter((f) => !(f in ALLOWED))
      .flatMap((f) => outsideReferences(f).map((r) => `${f}:${r.line}: ${r.text}`));
    expect(found).toEqual([]);
  });

  it('should find what such references look like (the rule can fail)', () => {
    const sample = [
      'Wire behaviour follows `shared/' + 'docs/back' + 'ends.md` Part 1.',
      '/** Query metadata Nomad sends (back' + 'ends.md 1.1). */',
      'Refresh a copy with `cp -r ../' + 'shared/' + 'fixtures/<path> test/fixtures/<path>`.',
      'replaying (shared/' + 'fixtures/recorded)',
      'Recorded against nova at 2026-11-24 by tools/' + 'real-cinder/verify_nova_actions.py',
      'Cited from hashicorp/nomad command/agent/http.go and docs/nomad.md: fine.',
    ].join('\n');
    expect(outsideReferences('sample.md', sample).map((r) => r.line)).toEqual([1, 2, 3, 4, 5]);
  });

  it('should resolve every relative Markdown link to a tracked file inside the repository', () => {
    const have = new Set(tracked);
    const dirs = new Set(
      tracked.flatMap((f) =>
        f
          .split('/')
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
      ),
    );
    const broken = tracked
      .filter((f) => f.endsWith('.md'))
      .flatMap((f) =>
        [...readFileSync(join(root, f), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
          .map((m) => m[1]!.replace(/#.*$/, ''))
          .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target))
          .filter((target) => {
            const to = normalize(join(dirname(f), target)).replace(/\/$/, '');
            return to.startsWith('..') || (!have.has(to) && !dirs.has(to));
          })
          .map((target) => `${f}: ${target}`),
      );
    expect(broken).toEqual([]);
  });
});

describe('fixtures name their upstream source', () => {
  const tracked = trackedFiles().filter((f) => f.startsWith('test/fixtures/'));
  const sources = readFileSync(join(root, 'test/fixtures/upstream/SOURCES.md'), 'utf8');

  it('should list every upstream sample in upstream/SOURCES.md with what it was taken from', () => {
    const samples = tracked.filter((f) => f.startsWith('test/fixtures/upstream/') && f.endsWith('.json'));
    expect(samples.length).toBeGreaterThan(10);
    // A row: | `nomad/<file>` | <its source> | …
    const unnamed = samples.filter((f) => {
      const row = sources.split('\n').find((l) => l.startsWith(`| \`${f.slice('test/fixtures/upstream/'.length)}\` |`));
      return !row || !/(website\/content\/api-docs|\.mdx|\.go\b)/.test(row);
    });
    expect(unnamed).toEqual([]);
  });

  it('should list in upstream/SOURCES.md only files the repository has', () => {
    const listed = [...sources.matchAll(/^\| `([^`*]+\.json)` \|/gm)].map((m) => `test/fixtures/upstream/${m[1]}`);
    expect(listed.length).toBeGreaterThan(10);
    expect(listed.filter((f) => !tracked.includes(f))).toEqual([]);
  });

  it('should open every recorded transcript with the real server and version it was recorded against', () => {
    const transcripts = tracked.filter((f) => /^test\/fixtures\/recorded\/[^/]+\/\d\d-[^/]+\.md$/.test(f));
    expect(transcripts.length).toBeGreaterThan(20);
    const unnamed = transcripts.filter(
      (f) =>
        !/^Recorded against a real (Cinder|Keystone|Nova) \d+\.\d+\.\d+ /.test(
          readFileSync(join(root, f), 'utf8').split('\n')[2] ?? '',
        ),
    );
    expect(unnamed).toEqual([]);
  });
});
