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
        .filter((i) => /^adapters\/[^/]+\/(results|requests|client|urls)$/.test(i) || i === 'adapters/http/transport' || i === 'undici' || i.startsWith('node:http'))
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

/**
 * Source text without comments, and SDL without descriptions: both may name a backend's word to
 * document a mapping; the rule is about the names clients and code use.
 */
function code(file: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  if (file.endsWith('.graphql')) return text.replace(/"""[\s\S]*?"""/g, '').replace(/"(?:[^"\\\n]|\\.)*"/g, '""').replace(/^\s*#.*$/gm, '');
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** graphql-transport-ws message types. */
const GRAPHQL_WS_MESSAGES = new Set(['connection_init', 'connection_ack']);

/** The backend folders under adapters/: everything else there (contract/, http/ …) is neutral. */
const BACKEND_FOLDERS = ['nomad', 'openstack'];

/** Everything outside the backend folders that speaks the unified model: schema, resolvers, server, the neutral contract. */
function neutralFiles(): string[] {
  const sdl = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'generated' ? [] : sdl(join(dir, e.name))) : e.name.endsWith('.graphql') ? [join(dir, e.name)] : []));
  const contract = files('adapters').filter((f) => !BACKEND_FOLDERS.some((b) => f.startsWith(`adapters/${b}/`)));
  return [...sdl('schema'), ...files('resolvers'), ...files('server'), ...files('subscriptions'), ...contract];
}

describe('wire words stay in the backend folders', () => {
  it('should name no Cinder action key (os-…) outside adapters/<backend>/', () => {
    const offending = neutralFiles().flatMap((f) => [...code(f).matchAll(/['"`]os-[a-z_]+/g)].map((m) => `${f}: ${m[0]}`));
    expect(offending).toEqual([]);
  });

  it('should use no snake_case wire field outside adapters/<backend>/', () => {
    // Prometheus metric names (gateway_…) are snake_case by convention, and graphql-ws names its
    // messages so (connection_init): neither is a backend's word.
    const offending = neutralFiles().flatMap((f) => [...code(f).matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)].filter((m) => !m[0].startsWith('gateway_') && !GRAPHQL_WS_MESSAGES.has(m[0])).map((m) => `${f}: ${m[0]}`));
    expect(offending).toEqual([]);
  });

  it('should use no Nomad wire field outside adapters/nomad/', () => {
    const wire = readFileSync(join(root, 'adapters/nomad/results-wire.ts'), 'utf8');
    const names = new Set([...wire.matchAll(/^\s+([A-Z][A-Za-z]+)\??:/gm)].map((m) => m[1]!).filter((n) => n.length >= 6 && /[a-z][A-Z]/.test(n)));
    expect(names.size).toBeGreaterThan(20);
    const offending = neutralFiles().flatMap((f) => {
      const text = code(f);
      // As a property (read, written or quoted), not a type that shares a CSI name (AccessMode).
      return [...names].filter((n) => new RegExp(`[.'"]${n}\\b|\\b${n}\\??:`).test(text)).map((n) => `${f}: ${n}`);
    });
    expect(offending).toEqual([]);
  });
});

describe('module size', () => {
  it('should keep every source file outside simulators/ and generated code at 400 lines or fewer', () => {
    const tracked = ['adapters', 'resolvers', 'server', 'subscriptions', 'schema', 'bench', 'scripts', 'test'].flatMap((d) => files(d));
    const long = tracked.filter((f) => readFileSync(join(root, f), 'utf8').split('\n').length > 400);
    expect(long).toEqual([]);
  });
});
