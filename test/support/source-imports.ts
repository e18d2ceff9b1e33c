/**
 * The repository's TypeScript files and their imports, read from the source text, for
 * test/architecture.test.ts and test/architecture/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The repository root. */
export const root = resolve(__dirname, '..', '..');

/** The `.ts` files below `dir` (repo-relative), generated code and node_modules left out. */
export function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name);
    if (name === 'generated' || name === 'node_modules') continue;
    if (statSync(join(root, p)).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Import specifiers of a file, resolved to repo-relative paths for relative ones. */
export function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => {
    const spec = m[1]!;
    return spec.startsWith('.') ? relative(root, resolve(root, dirname(file), spec)) : spec;
  });
}

/** An import or re-export of a file: its resolved specifier, and whether it brings types only (erased at run time). */
export interface ImportStatement {
  spec: string;
  typeOnly: boolean;
}

/** Import and re-export statements of a file (dynamic `import()` counts as a value import). */
export function importStatements(file: string): ImportStatement[] {
  const text = readFileSync(join(root, file), 'utf8');
  const resolveSpec = (spec: string): string =>
    spec.startsWith('.') ? relative(root, resolve(root, dirname(file), spec)) : spec;
  const statements = [...text.matchAll(/^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'([^']+)'/gm)].map(
    (m) => {
      const names = /\{([^}]*)\}/.exec(m[2]!)?.[1];
      // `import { type A, type B } from` is erased as `import type` is.
      const allTypes =
        names !== undefined &&
        !/^\s*\w/.test(m[2]!.replace(/\{[^}]*\}/, '')) &&
        names.split(',').every((n) => n.trim() === '' || /^type\s/.test(n.trim()));
      return { spec: resolveSpec(m[3]!), typeOnly: m[1] !== undefined || allTypes };
    },
  );
  const bare = [...text.matchAll(/^\s*import\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/gm)].map((m) => ({
    spec: resolveSpec((m[1] ?? m[2])!),
    typeOnly: false,
  }));
  return [...statements, ...bare];
}

/**
 * What each file of `folder` imports from the same folder, type imports and re-exports included
 * (a type cycle is still two files that cannot be read one without the other).
 */
export function fileImports(folder: string): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const f of files(folder)) {
    const from = f.replace(/\.ts$/, '');
    edges.set(
      from,
      new Set(
        importStatements(f)
          .map(({ spec }) => spec)
          .filter((spec) => spec.startsWith(`${folder}/`) && spec !== from),
      ),
    );
  }
  return edges;
}

/**
 * What a file re-exports of other modules: `export … from '<spec>'` (as the spec) and
 * `export { Name };` of an imported name (as the name). `text` stands in for the file's source.
 */
export function reExports(file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const imported = new Set(
    [...text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}/gm)].flatMap((m) =>
      m[1]!.split(',').map((n) =>
        n
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop()!,
      ),
    ),
  );
  return [
    ...[...text.matchAll(/^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*from\s*'([^']+)'/gm)].map((m) => m[1]!),
    ...[...text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\};/gm)].flatMap((m) =>
      m[1]!
        .split(',')
        .map((n) => n.trim())
        .filter((n) => imported.has(n)),
    ),
  ];
}
