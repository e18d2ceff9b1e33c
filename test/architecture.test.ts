/** Layering rules from docs/architecture.md, checked on the source text. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BACKEND_MODULES } from '../server/kinds';
import {
  BACKEND_FOLDERS,
  backendFolderOf,
  backendImportViolations,
  backendTypeNames,
  backendWordViolations,
  code,
  coreFiles,
  credentialHeaders,
  identifierViolations,
  NEUTRAL_ADAPTER_FOLDERS,
  stringViolations,
} from './support/backend-knowledge';
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

/** graphql-transport-ws message types. */
const GRAPHQL_WS_MESSAGES = new Set(['connection_init', 'connection_ack']);

/** Everything outside the backend folders that speaks the unified model: schema, resolvers, server, the neutral contract. */
function neutralFiles(): string[] {
  const sdl = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? e.name === 'generated'
          ? []
          : sdl(join(dir, e.name))
        : e.name.endsWith('.graphql')
          ? [join(dir, e.name)]
          : [],
    );
  const contract = files('adapters').filter((f) => !BACKEND_FOLDERS.some((b) => f.startsWith(`adapters/${b}/`)));
  return [
    ...sdl('schema'),
    ...files('domain'),
    ...files('resolvers'),
    ...files('server'),
    ...files('subscriptions'),
    ...contract,
  ];
}

describe('wire words stay in the backend folders', () => {
  it('should name no Cinder action key (os-…) outside adapters/<backend>/', () => {
    const offending = neutralFiles().flatMap((f) =>
      [...code(f).matchAll(/['"`]os-[a-z_]+/g)].map((m) => `${f}: ${m[0]}`),
    );
    expect(offending).toEqual([]);
  });

  it('should use no snake_case wire field outside adapters/<backend>/', () => {
    // Prometheus metric names (gateway_…) are snake_case by convention, and graphql-ws names its
    // messages so (connection_init): neither is a backend's word.
    const offending = neutralFiles().flatMap((f) =>
      [...code(f).matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)]
        .filter((m) => !m[0].startsWith('gateway_') && !GRAPHQL_WS_MESSAGES.has(m[0]))
        .map((m) => `${f}: ${m[0]}`),
    );
    expect(offending).toEqual([]);
  });

  it('should use no Nomad wire field outside adapters/nomad/', () => {
    const wire = readFileSync(join(root, 'adapters/nomad/wire/types.ts'), 'utf8');
    const names = new Set(
      [...wire.matchAll(/^\s+([A-Z][A-Za-z]+)\??:/gm)]
        .map((m) => m[1]!)
        .filter((n) => n.length >= 6 && /[a-z][A-Z]/.test(n)),
    );
    expect(names.size).toBeGreaterThan(20);
    const offending = neutralFiles().flatMap((f) => {
      const text = code(f);
      // As a property (read, written or quoted), not a type that shares a CSI name (AccessMode).
      return [...names].filter((n) => new RegExp(`[.'"]${n}\\b|\\b${n}\\??:`).test(text)).map((n) => `${f}: ${n}`);
    });
    expect(offending).toEqual([]);
  });
});

/**
 * Issue 18's "Done when" grep rule: no backend kind literal, credential header name or backend
 * detail `__typename` outside the backends' folders and their registrations (`server/kinds/`).
 * Issue 28 adds identifiers, strings and import paths: no core file names a backend's word in an
 * identifier (`RegisterNomadVolumeInput`, `nomadResolvers`) or a string (`'Cinder volume actions'`),
 * or imports a backend's folder (`adapters/<kind>/`, `resolvers/<kind>/`, `schema/<kind>/`,
 * `simulators/<kind>/`). The core files are the settled scope (test/support/backend-knowledge.ts,
 * `coreFiles`); README, docs, tests, simulators and the bench may name kinds.
 */

/**
 * Files the rules do not cover yet, each with why. Keep this list short; an entry is a gap to close,
 * not a place to put new code. Empty: every list of kinds is derived from the registrations.
 */
const NOT_YET_COVERED: readonly string[] = [];

/** Every rule's findings in `scope`. */
const backendKnowledge = (scope: readonly string[]): string[] => [
  ...backendWordViolations(scope),
  ...identifierViolations(scope),
  ...stringViolations(scope),
  ...backendImportViolations(scope),
];

/** Besides the core: the files that list what the kinds provide (the demo's parts, the contract suite's fixtures) and must derive it from the registrations. */
const LISTS = [...files('simulators').filter((f) => !f.includes('/', 'simulators/'.length)), ...files('test/contract')];

describe('backend knowledge stays in the backend folders and their registrations', () => {
  it('should have words to look for (kinds, credential headers, backend type names) and files to look in', () => {
    expect(BACKEND_FOLDERS.length).toBeGreaterThanOrEqual(2);
    expect(credentialHeaders().length).toBeGreaterThanOrEqual(2);
    expect(backendTypeNames().length).toBeGreaterThan(5);
    expect(coreFiles().length).toBeGreaterThan(50);
  });

  it('should name no backend kind, credential header or backend __typename in a core file', () => {
    expect(backendWordViolations(coreFiles(NOT_YET_COVERED))).toEqual([]);
  });

  it("should name no backend in a core file's identifiers or strings, and import no backend folder there", () => {
    const scope = coreFiles(NOT_YET_COVERED);
    expect({
      identifiers: identifierViolations(scope),
      strings: stringViolations(scope),
      imports: backendImportViolations([...scope, ...LISTS]),
    }).toEqual({ identifiers: [], strings: [], imports: [] });
  });

  it('should find what main had in core code (the rules can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arch-'));
    try {
      writeFileSync(join(dir, 'sample.ts'), SAMPLE);
      const f = relative(root, join(dir, 'sample.ts'));
      // Imports are resolved from the file's folder; a require() is as written.
      const resolved = (spec: string): string => relative(root, join(dir, spec));
      expect({
        identifiers: identifierViolations([f]),
        strings: stringViolations([f]),
        imports: backendImportViolations([f]),
      }).toEqual(SAMPLE_FINDINGS(f, resolved));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should leave out of the rules only files that still name a backend (a closed gap leaves the list)', () => {
    for (const f of NOT_YET_COVERED)
      expect({ file: f, named: backendKnowledge([f]).length > 0 }).toEqual({ file: f, named: true });
  });

  it('should register every backend folder, and have a folder for nothing else (codegen maps schema/<kind>/ by its name)', () => {
    const kinds = BACKEND_MODULES.map((m) => m.kind).sort();
    expect([...BACKEND_FOLDERS].sort()).toEqual(kinds);
    const folders = (top: string): string[] =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !['generated', 'common'].includes(e.name))
        .map((e) => e.name);
    expect(
      ['schema', 'resolvers', 'simulators'].flatMap((top) =>
        folders(top)
          .filter((d) => !kinds.includes(d))
          .map((d) => `${top}/${d}`),
      ),
    ).toEqual([]);
    expect(kinds.filter((k) => !existsSync(join(root, 'adapters', k, 'testing', 'contract-fixture.ts')))).toEqual([]);
  });
});

/** What test/architecture's rules found in main's core code (issue 28), one of each kind. */
const SAMPLE = [
  "import { nomadModule } from '../adapters/nomad/module';",
  "import { openstackResolvers } from '../resolvers/openstack';",
  "import type { RegisterNomadVolumeInput } from '../schema/generated/resolvers-types';",
  "const names = { volumeActions: 'Cinder volume actions', serverAttachments: 'Nova servers' };",
  "const mappers = { NomadNode: '../../adapters/nomad/model#NomadNodeRef' };",
  "const demo = () => require('../simulators/openstack/demo-backend');",
  '// Nomad, Cinder and Nova in a comment are documentation.',
  '// The stores kept in the process are InProcess…: "memory" is the memory backend\'s word alone.',
  'class MemoryEventLog {}',
].join('\n');

const SAMPLE_FINDINGS = (f: string, resolved: (spec: string) => string): Record<string, string[]> => ({
  identifiers: ['nomadModule', 'openstackResolvers', 'RegisterNomadVolumeInput', 'NomadNode', 'MemoryEventLog'].map(
    (id) => `${f}: ${id}`,
  ),
  strings: [
    "'../adapters/nomad/module'",
    "'../resolvers/openstack'",
    "'Cinder volume actions'",
    "'Nova servers'",
    "'../../adapters/nomad/model#NomadNodeRef'",
    "'../simulators/openstack/demo-backend'",
  ].map((s) => `${f}: ${s}`),
  imports: [
    resolved('../adapters/nomad/module'),
    resolved('../resolvers/openstack'),
    '../simulators/openstack/demo-backend',
  ].map((spec) => `${f} → ${spec}`),
});

/**
 * Adapters know no GraphQL argument: they name fields relative to the input they were given
 * (`nomad.nativeId`, `cascade`) and the resolver layer places them (`resolvers/input-fields.ts`).
 * So no string in `adapters/` is an argument path: `'input'` or anything naming `input.<field>`.
 */
function argumentPathLiterals(text: string): string[] {
  const literals = [...text.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) =>
    m[0].slice(1, -1).replace(/\$\{[^}]*\}/g, ''),
  );
  return literals.filter((l) => l === 'input' || /(^|[^\w$])input\.[A-Za-z_]/.test(l));
}

describe('argument paths stay in the resolvers', () => {
  it('should find argument paths where they are written', () => {
    expect(
      argumentPathLiterals(
        `f(x, 'input.nomad.nativeId'); g('input'); h(\`needs input.sizeBytes \${n}\`); k(\`\${input.volumeId}\`, 'the input', "inputs")`,
      ),
    ).toEqual(['input.nomad.nativeId', 'input', 'needs input.sizeBytes ']);
  });

  it('should have no GraphQL argument path (input.…) in a string under adapters/', () => {
    const offending = files('adapters').flatMap((f) => argumentPathLiterals(code(f)).map((l) => `${f}: ${l}`));
    expect(offending).toEqual([]);
  });
});

/**
 * Issue 18's "same shape for every backend folder": each has its module, a backend class that only
 * delegates, its subscriber access, its errors and its watcher folder; the rest is one folder per
 * resource or service (docs/architecture.md, "Backend folders").
 */
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
    const long = tracked.filter((f) => readFileSync(join(root, f), 'utf8').split('\n').length > 400);
    expect(long).toEqual([]);
  });
});
