/**
 * Issue 31, part 5: the README's first screen (what a terminal or a repository page shows before
 * scrolling) tells an operator where to go to run the gateway against real backends, a section
 * near the end of a long page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../support/source-imports';

/** What a terminal or a repository page shows before scrolling. */
const FIRST_SCREEN_LINES = 40;

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** The `#anchor` links in `text`. */
const anchorLinks = (text: string): string[] => [...text.matchAll(/\]\(#([^)\s]+)\)/g)].map((m) => m[1]!);

describe("the README's first screen", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const headings = [...readme.matchAll(/^#{2,} (.+)$/gm)].map((m) => anchorOf(m[1]!));

  it('should link to "Pointing it at real backends", a heading the README has', () => {
    const first = readme.split('\n').slice(0, FIRST_SCREEN_LINES).join('\n');
    expect(headings).toContain('pointing-it-at-real-backends');
    expect(anchorLinks(first)).toContain('pointing-it-at-real-backends');
  });

  it("should only link to the README's own headings from it (the check can fail)", () => {
    expect(anchorOf('Pointing it at real backends')).toBe('pointing-it-at-real-backends');
    expect(anchorOf('OpenStack: asynchronous changes as tracked operations')).toBe(
      'openstack-asynchronous-changes-as-tracked-operations',
    );
    const first = readme.split('\n').slice(0, FIRST_SCREEN_LINES).join('\n');
    expect(anchorLinks(first).filter((a) => !headings.includes(a))).toEqual([]);
  });
});
