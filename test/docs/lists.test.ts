/**
 * Lists the docs keep that the code also has, compared with the code (as test/server/config-schema
 * compares docs/configuration.md with the settings): the error codes (README, "Errors";
 * docs/troubleshooting.md, "Error codes"), the backend facets (docs/architecture.md; each kind's
 * page) and the backend kinds (a page, a README link and a layout row each).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FACET_NAMES, type Facet } from '../../adapters/contract/capabilities';
import { ErrorCode } from '../../adapters/contract/errors';
import { loadConfig } from '../../server/config';
import { createRegistry } from '../../server/backends';
import { EdgeErrorCode } from '../../server/http/errors';
import { BACKEND_MODULES } from '../../server/kinds';
import { root } from '../support/source-imports';

const doc = (path: string): string => readFileSync(join(root, path), 'utf8');
const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();
/** The `CODE`s in backticks in `text`. */
const codesIn = (text: string): string[] => sorted([...text.matchAll(/`([A-Z][A-Z_]{2,})`/g)].map((m) => m[1]!));
/** The part of `text` from `start` to the first blank line after it. */
function block(text: string, start: string): string {
  const at = text.indexOf(start);
  if (at < 0) throw new Error(`no ${JSON.stringify(start)}`);
  const end = text.indexOf('\n\n', at + start.length + 2);
  return text.slice(at, end < 0 ? undefined : end);
}
/** The first column of the Markdown table that follows `heading`. */
function firstColumn(text: string, heading: string): string {
  const lines = text.slice(text.indexOf(heading)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  // The header row and the separator row first.
  return lines
    .slice(start + 2, end < 0 ? undefined : end)
    .map((r) => r.split(' | ')[0]!)
    .join('\n');
}

describe('error codes', () => {
  const errorCodes = sorted(Object.values(ErrorCode));
  const edgeCodes = sorted(Object.values(EdgeErrorCode));

  it('should list in the README every ErrorCode, and nothing else', () => {
    expect(errorCodes.length).toBeGreaterThan(20);
    expect(codesIn(block(doc('README.md'), 'with `code` one\nof these:'))).toEqual(errorCodes);
  });

  it('should give every ErrorCode and EdgeErrorCode a row of docs/troubleshooting.md, "Error codes", and nothing else', () => {
    expect(codesIn(firstColumn(doc('docs/troubleshooting.md'), '## Error codes'))).toEqual(
      sorted([...errorCodes, ...edgeCodes]),
    );
  });

  it('should find a code the README leaves out (the check can fail)', () => {
    const readme = doc('README.md').replace('`BACKEND_ERROR`,', '');
    expect(errorCodes.filter((c) => !codesIn(block(readme, 'with `code` one\nof these:')).includes(c))).toEqual([
      'BACKEND_ERROR',
    ]);
  });
});

/** The facets named in backticks in `text`. */
const facetsIn = (text: string): string[] =>
  sorted([...text.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((w) => w in FACET_NAMES));
/** The backticked words after "the facets " up to the end of that list. */
const listedFacets = (text: string): string[] => {
  const m = /the facets ((?:`\w+`(?:, | and |,\n| and\n|\n)?)+)/.exec(text);
  if (!m) throw new Error('no "the facets `…`" list');
  return facetsIn(m[1]!);
};

describe('facets', () => {
  const all = sorted(Object.keys(FACET_NAMES));

  it('should list every facet of adapters/contract/capabilities.ts in docs/architecture.md, and nothing else', () => {
    expect(all).toContain('callerScope');
    const m = /`capabilities\.ts` \(the facets, named by what they do and checked by the compiler: ([^;]+);/.exec(
      doc('docs/architecture.md'),
    );
    expect(m && facetsIn(m[1]!)).toEqual(all);
  });

  it.each(BACKEND_MODULES.map((m) => [m.kind]))(
    'should list in docs/%s.md exactly the facets its backend has',
    async (kind) => {
      const module = BACKEND_MODULES.find((m) => m.kind === kind)!;
      const config = loadConfig({ GATEWAY_BACKENDS: `doc=${kind}${module.needsUrl ? '@http://127.0.0.1:9' : ''}` });
      const registry = createRegistry(config.backends);
      try {
        const backend = registry.forId('doc');
        const has = all.filter((f) => backend[f as Facet] !== undefined);
        expect(has.length).toBeGreaterThan(0);
        expect(listedFacets(doc(`docs/${kind}.md`))).toEqual(has);
      } finally {
        await registry.close();
      }
    },
  );
});

describe('backend kinds', () => {
  const kinds = BACKEND_MODULES.map((m) => m.kind);
  const architecture = doc('docs/architecture.md');

  it('should give every registered kind its page, a README link to it and a row in docs/architecture.md', () => {
    expect(kinds.length).toBeGreaterThanOrEqual(3);
    const readme = doc('README.md');
    const missing = kinds.flatMap((k) => [
      ...(readme.includes(`](docs/${k}.md)`) ? [] : [`README.md → docs/${k}.md`]),
      ...(architecture.includes(`| \`adapters/${k}/\` |`) ? [] : [`docs/architecture.md: adapters/${k}/`]),
    ]);
    expect(missing).toEqual([]);
  });

  it('should have a docs/architecture.md row for no adapters/ folder but the kinds and the neutral ones', () => {
    const rows = [...architecture.matchAll(/^\| `adapters\/([^/`]+)\/` \|/gm)].map((m) => m[1]!);
    expect(rows.filter((r) => !kinds.includes(r))).toEqual([]);
  });
});
