/**
 * bench/RESULTS.md holds one section per benchmark script, each between its own markers, so each
 * script rewrites only its part (compare ratios within one section: one run).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Replaces (or appends) the section `name` of the results file at `path`. */
export function writeSection(path: string, name: string, markdown: string): void {
  const open = `<!-- section:${name} -->`;
  const close = `<!-- /section:${name} -->`;
  const block = `${open}\n${markdown.trim()}\n${close}`;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const from = text.indexOf(open);
  const to = text.indexOf(close);
  const next =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + close.length)
      : `${text.trimEnd()}${text ? '\n\n' : ''}${block}\n`;
  writeFileSync(path, next);
}
