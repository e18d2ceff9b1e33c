/** Import cycles between folders (or files), for test/architecture.test.ts's layering rules. */

/**
 * The folder a file belongs to for the cycle rule: its top-level folder, but `subscriptions/` by
 * subfolder (the domain uses the operation tracker and change events, and the live hub uses the
 * domain: layers of their own, in one folder).
 */
export function layerOf(file: string): string {
  const [top, sub, rest] = file.split('/');
  return top === 'subscriptions' && sub !== undefined && rest !== undefined ? `${top}/${sub}` : top!;
}

/**
 * Folders that import each other, directly or round a loop, each loop once as `a → b → a` (edges: folder → folders it imports).
 * The names are opaque: files of one folder (`fileImports`, support/source-imports.ts) work as well.
 */
export function folderCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const found = new Set<string>();
  const walk = (path: string[]): void => {
    for (const next of edges.get(path[path.length - 1]!) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const loop = path.slice(at);
        // Start each loop at its least name, so one loop is reported once.
        const first = loop.indexOf([...loop].sort()[0]!);
        found.add([...loop.slice(first), ...loop.slice(0, first), loop[first]].join(' → '));
      } else walk([...path, next]);
    }
  };
  for (const start of edges.keys()) walk([start]);
  return [...found].sort();
}
