/**
 * Issue 18's "same shape for every backend folder": each has its module, a backend class that only
 * delegates, its subscriber access, its errors and its watcher folder; the rest is one folder per
 * resource or service (docs/architecture.md, "Backend folders").
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_FOLDERS } from '../support/backend-knowledge';
import { root } from '../support/source-imports';

const BACKEND_FOLDER_FILES = ['module.ts', 'backend.ts', 'access.ts', 'errors.ts', 'watch/index.ts'];

/**
 * What delegation-only rules out in `backend.ts`: a function of its own beside the class, and in
 * the class a branch, loop, `await` or inline function (the work is in the folder's modules). A
 * function type in a signature counts as an arrow too: name it outside the class.
 */
function delegationViolations(file: string, source = readFileSync(join(root, file), 'utf8')): string[] {
  // Comments out, lines kept (violations are reported by line).
  const text = source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ''))
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const at = text.search(/^export class /m);
  if (at < 0) return [`${file}: no exported class`];
  const own = [...text.slice(0, at).matchAll(/^(?:export\s+)?(?:async\s+)?function\s+(\w+)/gm)].map(
    (m) => `${file}: function ${m[1]}`,
  );
  const body = text.slice(at);
  const logic = [...body.matchAll(/\b(?:if|for|while|switch|try|catch|await|function)\b|=>/g)].map(
    (m) => `${file}:${text.slice(0, at + m.index).split('\n').length}: ${m[0]}`,
  );
  return [...own, ...logic];
}

describe('backend folders have one shape', () => {
  it('should give every backend folder module.ts, backend.ts, access.ts, errors.ts and watch/', () => {
    expect(BACKEND_FOLDERS).toEqual(expect.arrayContaining(['nomad', 'openstack', 'memory']));
    const missing = BACKEND_FOLDERS.flatMap((b) =>
      BACKEND_FOLDER_FILES.filter((f) => !existsSync(join(root, 'adapters', b, f))).map((f) => `adapters/${b}/${f}`),
    );
    expect(missing).toEqual([]);
  });

  it('should keep every backend.ts to delegation (no own function, no branch, loop, await or closure in the class)', () => {
    expect(BACKEND_FOLDERS.flatMap((b) => delegationViolations(`adapters/${b}/backend.ts`))).toEqual([]);
  });

  it('should find the logic in a backend.ts that does work itself (the rule can fail)', () => {
    const sample = [
      'function load(s: string): number {',
      '  return s.length;',
      '}',
      'export class SampleBackend {',
      '  get(ref: string): Promise<number> {',
      '    if (!ref) throw new Error("no ref");',
      '    return Promise.resolve(load(ref));',
      '  }',
      '  list(refs: string[]): number[] {',
      '    return refs.map((r) => load(r));',
      '  }',
      '}',
    ].join('\n');
    expect(delegationViolations('sample.ts', sample)).toEqual([
      'sample.ts: function load',
      'sample.ts:6: if',
      'sample.ts:10: =>',
    ]);
  });
});
