/** Layering rules from docs/architecture.md, checked on the source text. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const root = resolve(__dirname, '..');

function files(dir: string): string[] {
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
function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => {
    const spec = m[1]!;
    return spec.startsWith('.') ? relative(root, resolve(root, dirname(file), spec)) : spec;
  });
}

describe('layering', () => {
  it('should keep wire shapes and HTTP out of resolvers and schema', () => {
    const offending = [...files('resolvers'), ...files('schema')].flatMap((f) =>
      imports(f)
        .filter((i) => /^adapters\/[^/]+\/(results|requests|client|urls)$/.test(i) || i === 'adapters/transport' || i === 'undici' || i.startsWith('node:http'))
        .map((i) => `${f} → ${i}`),
    );
    expect(offending).toEqual([]);
  });

  it('should keep adapters independent of the layers above them', () => {
    const offending = files('adapters').flatMap((f) => imports(f).filter((i) => /^(server|resolvers|subscriptions|simulators)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offending).toEqual([]);
  });

  it('should keep simulators free of gateway code (they are the other side)', () => {
    const offending = files('simulators').flatMap((f) => imports(f).filter((i) => /^(server|resolvers|subscriptions|adapters|schema)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offending).toEqual([]);
  });

  it('should not mock modules in tests', () => {
    const offending = files('test').filter((f) => f !== 'test/architecture.test.ts' && /jest\.mock\(/.test(readFileSync(join(root, f), 'utf8')));
    expect(offending).toEqual([]);
  });
});
