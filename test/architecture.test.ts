/**
 * Layering rules from docs/architecture.md, checked on the source text; and module size. The rules
 * on words, backend knowledge and backend folders' shape are in test/architecture/.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_FOLDERS, backendFolderOf, code, NEUTRAL_ADAPTER_FOLDERS } from './support/backend-knowledge';
import { folderCycles, layerOf } from './support/folder-cycles';
import { fileImports, files, imports, importStatements, reExports, root } from './support/source-imports';

/**
 * What `domain/` may import from `subscriptions/`, and how: the operation tracker (the domain
 * tracks what it accepted). Nothing from `server/`: the registry of configured backends, the
 * idempotency store's interface and the caller limiter are the domain's (`domain/registry.ts`,
 * `domain/idempotency.ts`, `domain/caller-limiter.ts`); the server builds them and hands them in.
 */
const DOMAIN_MAY_IMPORT_FROM_SUBSCRIPTIONS: Readonly<Record<string, 'types' | 'values'>> = {
  'subscriptions/operations': 'values', // the operation tracker and what it asks of the watcher directory
};

/**
 * What `resolvers/` imports (docs/architecture.md, "Layout"): the domain's use cases and execution
 * context, the contract, merged paging and cursors (`adapters/listing.ts`), the generated resolver
 * types, graphql and graphql-scalars, and the live path's event view as a type; a backend's
 * resolvers (`resolvers/<kind>/`) also their own adapter folder, for its model and types.
 */
const RESOLVERS_MAY_IMPORT = [
  /^domain(\/|$)/,
  /^adapters\/contract\//,
  /^adapters\/listing$/,
  /^schema\/generated\/resolvers-types$/,
  /^resolvers\//,
  /^graphql(-scalars)?$/,
];
const RESOLVERS_MAY_IMPORT_TYPES = [/^subscriptions\/live\/view$/];

/** The folders below the wiring and what each imports (value or type): server/ may import them all, so it is left out. */
function layerImports(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const f of ['adapters', 'domain', 'resolvers', 'schema', 'subscriptions'].flatMap((d) => files(d))) {
    for (const { spec } of importStatements(f)) {
      if (!/^(adapters|domain|resolvers|schema|subscriptions|server)\//.test(spec)) continue;
      const [from, to] = [
        layerOf(f),
        layerOf(
          existsSync(join(root, spec)) && statSync(join(root, spec)).isDirectory() ? `${spec}/index.ts` : `${spec}.ts`,
        ),
      ];
      if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  return edges;
}

describe('layering', () => {
  it('should keep wire shapes and HTTP out of resolvers and schema', () => {
    const offending = [...files('resolvers'), ...files('schema')].flatMap((f) =>
      imports(f)
        .filter(
          (i) =>
            /^adapters\/[^/]+\/(results|requests|client|urls)$/.test(i) ||
            i === 'adapters/http/transport' ||
            i === 'undici' ||
            i.startsWith('node:http'),
        )
        .map((i) => `${f} → ${i}`),
    );
    expect(offending).toEqual([]);
  });

  it("should import into resolvers/ only the domain, the contract, merged paging, the generated types and the live event view (a type); a backend's resolvers also their adapter folder", () => {
    const offending = files('resolvers').flatMap((f) => {
      const own = /^resolvers\/([^/]+)\//.exec(f)?.[1];
      return importStatements(f)
        .filter(
          ({ spec, typeOnly }) =>
            !RESOLVERS_MAY_IMPORT.some((re) => re.test(spec)) &&
            !(typeOnly && RESOLVERS_MAY_IMPORT_TYPES.some((re) => re.test(spec))) &&
            !(own && spec.startsWith(`adapters/${own}/`)),
        )
        .map(({ spec, typeOnly }) => `${f} → ${spec}${typeOnly ? ' (types)' : ''}`);
    });
    expect(offending).toEqual([]);
  });

  it("should keep adapters independent of the layers above them (a backend's testing/ is test code)", () => {
    const offending = files('adapters')
      .filter((f) => !f.includes('/testing/'))
      .flatMap((f) =>
        imports(f)
          .filter((i) => /^(server|domain|resolvers|subscriptions|simulators)\//.test(i))
          .map((i) => `${f} → ${i}`),
      );
    expect(offending).toEqual([]);
  });

  it('should keep test code out of production: nothing outside a testing/ folder imports one, and the build leaves them out', () => {
    const production = ['adapters', 'domain', 'resolvers', 'schema', 'server', 'simulators', 'subscriptions']
      .flatMap((d) => files(d))
      .filter((f) => !f.includes('/testing/'));
    const offending = production.flatMap((f) =>
      imports(f)
        .filter((i) => /(^|\/)testing\//.test(i) || /^test\//.test(i))
        .map((i) => `${f} → ${i}`),
    );
    expect(offending).toEqual([]);
    expect(JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).exclude).toContain('**/testing/**');
  });

  it('should keep simulators free of gateway code (they are the other side)', () => {
    const offending = files('simulators').flatMap((f) =>
      imports(f)
        .filter((i) => /^(server|domain|resolvers|subscriptions|adapters|schema)\//.test(i))
        .map((i) => `${f} → ${i}`),
    );
    expect(offending).toEqual([]);
  });

  it('should import nothing from resolvers/ or server/ into subscriptions/ (the wiring hands in what the live path needs)', () => {
    const offending = files('subscriptions').flatMap((f) =>
      importStatements(f)
        .filter(({ spec }) => spec.startsWith('resolvers/') || spec.startsWith('server/'))
        .map(({ spec, typeOnly }) => `${f} → ${spec}${typeOnly ? ' (types)' : ''}`),
    );
    expect(offending).toEqual([]);
  });

  it('should import nothing into domain/ from resolvers/ or server/, and from subscriptions/ only what it may', () => {
    expect(files('domain').length).toBeGreaterThan(5);
    const offending = files('domain').flatMap((f) =>
      importStatements(f)
        .filter(({ spec, typeOnly }) => {
          if (spec.startsWith('resolvers/') || spec.startsWith('server/')) return true;
          if (!spec.startsWith('subscriptions/')) return false;
          const allowed = DOMAIN_MAY_IMPORT_FROM_SUBSCRIPTIONS[spec];
          return allowed === undefined || (allowed === 'types' && !typeOnly);
        })
        .map(({ spec, typeOnly }) => `${f} → ${spec}${typeOnly ? ' (types)' : ''}`),
    );
    expect(offending).toEqual([]);
  });

  it('should leave idempotency, tracking, live notices and read-backs to domain/ (resolvers map arguments and call a use case)', () => {
    const steps =
      /\bidempotent\(|\boncePerKey\(|\btrack\(|\breadBack\(|\bctx\.(?:operations|idempotency|live)\b|\.volume\.clear\(/g;
    const offending = files('resolvers').flatMap((f) => [
      ...[...code(f).matchAll(steps)].map((m) => `${f}: ${m[0]}`),
      ...imports(f)
        .filter((i) => i === 'server/idempotency' || i.startsWith('subscriptions/operations'))
        .map((i) => `${f} → ${i}`),
    ]);
    expect(offending).toEqual([]);
  });

  it('should keep the operation tracker, which domain/ uses, free of domain/ (no cycle)', () => {
    const offending = files('subscriptions/operations').flatMap((f) =>
      importStatements(f)
        .filter(({ spec }) => spec.startsWith('domain/'))
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('should leave no import cycle between folders below the wiring (server/ may import them all)', () => {
    const edges = layerImports();
    expect([...edges.keys()]).toEqual(
      expect.arrayContaining(['domain', 'resolvers', 'subscriptions/live', 'subscriptions/operations']),
    );
    expect(folderCycles(edges)).toEqual([]);
  });

  it('should find a folder cycle, direct or round a loop (the rule can fail)', () => {
    const sample = new Map([
      ['domain', new Set(['adapters', 'subscriptions/operations'])],
      ['subscriptions/operations', new Set(['subscriptions/events', 'domain'])],
      ['subscriptions/live', new Set(['domain', 'server'])],
      ['server', new Set(['subscriptions/live'])],
      ['adapters', new Set<string>()],
    ]);
    expect(folderCycles(sample)).toEqual([
      'domain → subscriptions/operations → domain',
      'server → subscriptions/live → server',
    ]);
  });

  it('should leave no import cycle among the files of adapters/contract/, type imports included', () => {
    const edges = fileImports('adapters/contract');
    expect(edges.size).toBeGreaterThan(10);
    expect(folderCycles(edges)).toEqual([]);
  });

  it('should import nothing into adapters/contract/ from adapters/http/ (HTTP infrastructure uses the contract, not the reverse)', () => {
    const offending = files('adapters/contract').flatMap((f) =>
      importStatements(f)
        .filter(({ spec }) => spec.startsWith('adapters/http/'))
        .map(({ spec, typeOnly }) => `${f} → ${spec}${typeOnly ? ' (types)' : ''}`),
    );
    expect(offending).toEqual([]);
  });

  it('should keep the contract and HTTP infrastructure free of backend folders', () => {
    expect(BACKEND_FOLDERS).toEqual(expect.arrayContaining(['nomad', 'openstack']));
    const neutral = [...NEUTRAL_ADAPTER_FOLDERS].flatMap((d) => files(`adapters/${d}`));
    const offending = neutral.flatMap((f) =>
      importStatements(f)
        .filter(({ spec }) => backendFolderOf(spec) !== null)
        .map(({ spec }) => `${f} → ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('should keep each backend folder free of the others', () => {
    const offending = BACKEND_FOLDERS.flatMap((b) =>
      files(`adapters/${b}`).flatMap((f) =>
        importStatements(f)
          .filter(({ spec }) => ![null, b].includes(backendFolderOf(spec)))
          .map(({ spec }) => `${f} → ${spec}`),
      ),
    );
    expect(offending).toEqual([]);
  });

  it("should re-export another module's names only from a folder's index.ts, the registrations and the model's parts (no shim keeps an old import path)", () => {
    const mayReExport = (f: string): boolean =>
      f.endsWith('/index.ts') || f === 'server/kinds/registered.ts' || f === 'adapters/contract/model.ts';
    const production = [
      'adapters',
      'domain',
      'resolvers',
      'schema',
      'server',
      'simulators',
      'subscriptions',
      'bench',
      'scripts',
    ].flatMap((d) => files(d));
    expect(production.filter((f) => !mayReExport(f)).flatMap((f) => reExports(f).map((r) => `${f} → ${r}`))).toEqual(
      [],
    );
    expect(
      reExports(
        'sample.ts',
        "import { A, type B } from './a';\nexport { A };\nexport type { C } from './c';\nexport const D = 1;",
      ),
    ).toEqual(['./c', 'A']);
  });

  it('should not mock modules in tests', () => {
    const offending = files('test').filter(
      (f) => f !== 'test/architecture.test.ts' && /jest\.mock\(/.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(offending).toEqual([]);
  });
});

describe('module size', () => {
  it('should keep every source file outside simulators/ and generated code at 400 lines or fewer', () => {
    const tracked = [
      'adapters',
      'domain',
      'resolvers',
      'server',
      'subscriptions',
      'schema',
      'bench',
      'scripts',
      'test',
    ].flatMap((d) => files(d));
    // Lines as `wc -l` counts them: a final newline ends the last line, it does not start another.
    const lines = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const long = tracked.filter((f) => lines(readFileSync(join(root, f), 'utf8')) > 400);
    expect(long).toEqual([]);
  });
});
