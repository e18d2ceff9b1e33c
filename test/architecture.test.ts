/** Layering rules from docs/architecture.md, checked on the source text. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { folderCycles, layerOf } from './support/folder-cycles';
import { fileImports, files, imports, importStatements, root } from './support/source-imports';

/**
 * The backend folders: every folder of `adapters/` but the contract's and HTTP infrastructure's
 * (a new `adapters/<kind>/` is one by being there).
 */
const NEUTRAL_ADAPTER_FOLDERS = new Set(['contract', 'http']);
const BACKEND_FOLDERS = readdirSync(join(root, 'adapters'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && !NEUTRAL_ADAPTER_FOLDERS.has(e.name))
  .map((e) => e.name);

/** The backend folder an import lands in (`adapters/<kind>/…`), or null. */
const backendFolderOf = (spec: string): string | null => {
  const m = /^adapters\/([^/]+)\//.exec(spec);
  return m && BACKEND_FOLDERS.includes(m[1]!) ? m[1]! : null;
};

/**
 * What `domain/` may import from `subscriptions/`, and how: the operation tracker (the domain
 * tracks what it accepted). Nothing from `server/`: the registry of configured backends, the
 * idempotency store's interface and the caller limiter are the domain's (`domain/registry.ts`,
 * `domain/idempotency.ts`, `domain/caller-limiter.ts`); the server builds them and hands them in.
 */
const DOMAIN_MAY_IMPORT_FROM_SUBSCRIPTIONS: Readonly<Record<string, 'types' | 'values'>> = {
  'subscriptions/operations': 'values', // the operation tracker and what it asks of the watcher directory
};

/** The folders below the wiring and what each imports (value or type): server/ may import them all, so it is left out. */
function layerImports(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const f of ['adapters', 'domain', 'resolvers', 'schema', 'subscriptions'].flatMap((d) => files(d))) {
    for (const { spec } of importStatements(f)) {
      if (!/^(adapters|domain|resolvers|schema|subscriptions|server)\//.test(spec)) continue;
      const [from, to] = [layerOf(f), layerOf(existsSync(join(root, spec)) && statSync(join(root, spec)).isDirectory() ? `${spec}/index.ts` : `${spec}.ts`)];
      if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  return edges;
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

  it('should keep adapters independent of the layers above them (a backend\'s testing/ is test code)', () => {
    const offending = files('adapters')
      .filter((f) => !f.includes('/testing/'))
      .flatMap((f) => imports(f).filter((i) => /^(server|domain|resolvers|subscriptions|simulators)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offending).toEqual([]);
  });

  it('should keep simulators free of gateway code (they are the other side)', () => {
    const offending = files('simulators').flatMap((f) => imports(f).filter((i) => /^(server|domain|resolvers|subscriptions|adapters|schema)\//.test(i)).map((i) => `${f} → ${i}`));
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
    const steps = /\bidempotent\(|\boncePerKey\(|\btrack\(|\breadBack\(|\bctx\.(?:operations|idempotency|live)\b|\.volume\.clear\(/g;
    const offending = files('resolvers').flatMap((f) => [
      ...[...code(f).matchAll(steps)].map((m) => `${f}: ${m[0]}`),
      ...imports(f).filter((i) => i === 'server/idempotency' || i.startsWith('subscriptions/operations')).map((i) => `${f} → ${i}`),
    ]);
    expect(offending).toEqual([]);
  });

  it('should keep the operation tracker, which domain/ uses, free of domain/ (no cycle)', () => {
    const offending = files('subscriptions/operations').flatMap((f) => importStatements(f).filter(({ spec }) => spec.startsWith('domain/')).map(({ spec }) => `${f} → ${spec}`));
    expect(offending).toEqual([]);
  });

  it('should leave no import cycle between folders below the wiring (server/ may import them all)', () => {
    const edges = layerImports();
    expect([...edges.keys()]).toEqual(expect.arrayContaining(['domain', 'resolvers', 'subscriptions/live', 'subscriptions/operations']));
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
    expect(folderCycles(sample)).toEqual(['domain → subscriptions/operations → domain', 'server → subscriptions/live → server']);
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
    const offending = neutral.flatMap((f) => importStatements(f).filter(({ spec }) => backendFolderOf(spec) !== null).map(({ spec }) => `${f} → ${spec}`));
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

/** Everything outside the backend folders that speaks the unified model: schema, resolvers, server, the neutral contract. */
function neutralFiles(): string[] {
  const sdl = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'generated' ? [] : sdl(join(dir, e.name))) : e.name.endsWith('.graphql') ? [join(dir, e.name)] : []));
  const contract = files('adapters').filter((f) => !BACKEND_FOLDERS.some((b) => f.startsWith(`adapters/${b}/`)));
  return [...sdl('schema'), ...files('domain'), ...files('resolvers'), ...files('server'), ...files('subscriptions'), ...contract];
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
    const wire = readFileSync(join(root, 'adapters/nomad/wire/types.ts'), 'utf8');
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

/**
 * Issue 18's "Done when" grep rule: no backend kind literal, credential header name or backend
 * detail `__typename` outside `adapters/<backend>/`, `schema/<backend>/` and the registrations
 * (`server/kinds/`). Its scope is the settled one: TypeScript under the contract root
 * (`adapters/` but its backend folders), `server/`, `resolvers/` (but its backend folders),
 * `subscriptions/`, and the core `schema/` (SDL without descriptions and comments), plus the
 * domain layer (`domain/`), which is as neutral as the contract. README, docs,
 * tests, simulators and the bench may name kinds.
 */

/**
 * Files the rule does not cover yet, each with why. Keep this list short; an entry is a gap to close,
 * not a place to put new code. Empty: demo mode's per-kind parts live in `simulators/<kind>/demo-backend.ts`.
 */
const NOT_YET_COVERED: readonly string[] = [];

/** The registrations (server/kinds/): the one place outside the backend folders that imports their parts. */
const REGISTRATION = 'server/kinds/';

/**
 * Browser code served by the gateway that is a client of the public schema, as the README's
 * examples are: the /live page selects the backends' consumer types as any client does.
 */
const CLIENT_CODE: readonly string[] = ['server/live/page/'];

/**
 * Credential headers the modules declare (`header: '…'` in a backend folder), plus the two the
 * gateway has always used, so the rule has words even before every module declares its own.
 */
function credentialHeaders(): string[] {
  const declared = BACKEND_FOLDERS.flatMap((b) => files(`adapters/${b}`).flatMap((f) => [...code(f).matchAll(/\bheader:\s*['"`](X-[A-Za-z0-9-]+)['"`]/g)].map((m) => m[1]!)));
  return [...new Set(['X-Nomad-Token', 'X-Auth-Token', ...declared].map((h) => h.toLowerCase()))];
}

/**
 * Backend type names: those declared in a backend's SDL (`schema/<backend>/`: its detail types,
 * consumer types and inputs), and those still declared in the core SDL under a kind's name (`NomadNode`).
 */
function backendTypeNames(): string[] {
  const sdl = (dir: string): string[] => readdirSync(join(root, dir)).filter((n) => n.endsWith('.graphql')).map((n) => join(dir, n));
  const declared = (f: string): string[] => [...code(f).matchAll(/^\s*(?:type|union|interface|enum|input|scalar)\s+([A-Za-z_]\w*)/gm)].map((m) => m[1]!);
  const backendSdl = BACKEND_FOLDERS.filter((b) => existsSync(join(root, 'schema', b))).flatMap((b) => sdl(join('schema', b)));
  const kindNamed = sdl('schema').flatMap(declared).filter((n) => BACKEND_FOLDERS.some((b) => n.toLowerCase().startsWith(b)));
  return [...new Set([...backendSdl.flatMap(declared), ...kindNamed])];
}

/** The files the grep rule covers. */
function grepRuleScope(): string[] {
  const inBackendFolder = (f: string, top: string): boolean => BACKEND_FOLDERS.some((b) => f.startsWith(`${top}/${b}/`));
  const coreSdl = readdirSync(join(root, 'schema')).filter((n) => n.endsWith('.graphql')).map((n) => join('schema', n));
  return [
    ...files('adapters').filter((f) => !inBackendFolder(f, 'adapters')),
    ...files('server').filter((f) => !f.startsWith(REGISTRATION) && !CLIENT_CODE.some((c) => f.startsWith(c))),
    ...files('domain'),
    ...files('resolvers').filter((f) => !inBackendFolder(f, 'resolvers')),
    ...files('subscriptions'),
    ...files('schema').filter((f) => !inBackendFolder(f, 'schema')),
    ...coreSdl,
  ].filter((f) => !NOT_YET_COVERED.includes(f));
}

/** Every backend kind literal, credential header name and backend `__typename` in the rule's scope, as `file: word`. */
function backendWordViolations(scope: readonly string[] = grepRuleScope()): string[] {
  const kinds = BACKEND_FOLDERS;
  const headers = credentialHeaders();
  const typenames = backendTypeNames();
  const escape = (w: string): string => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // In TypeScript a kind or a type name counts as a quoted literal ('NOMAD', "nomad", `NovaServer`);
  // in SDL as a word (an enum value, a field's type).
  const tsKind = new RegExp(`(['"\`])(${kinds.map(escape).join('|')})\\1`, 'gi');
  const tsType = new RegExp(`(['"\`])(${typenames.map(escape).join('|')})\\1`, 'g');
  const sdlWord = new RegExp(`\\b(${[...kinds.map((k) => k.toUpperCase()), ...typenames].map(escape).join('|')})\\b`, 'g');
  // Without its `x-`, so a pattern (`/^x-(nomad-token|auth-token)/`) counts as the name does.
  const header = new RegExp(headers.map((h) => escape(h.replace(/^x-/, ''))).join('|'), 'gi');
  return scope.flatMap((f) => {
    const text = code(f);
    const words = f.endsWith('.graphql') ? [...text.matchAll(sdlWord)].map((m) => m[1]!) : [...[...text.matchAll(tsKind)].map((m) => m[2]!), ...[...text.matchAll(tsType)].map((m) => m[2]!)];
    return [...words, ...[...text.matchAll(header)].map((m) => m[0])].map((w) => `${f}: ${w}`);
  });
}

describe('backend knowledge stays in the backend modules', () => {
  it('should have words to look for (kinds, credential headers, backend type names)', () => {
    expect(BACKEND_FOLDERS.length).toBeGreaterThanOrEqual(2);
    expect(credentialHeaders().length).toBeGreaterThanOrEqual(2);
    expect(backendTypeNames().length).toBeGreaterThan(5);
    expect(grepRuleScope().length).toBeGreaterThan(50);
  });

  it('should name no backend kind, credential header or backend __typename outside adapters/<backend>/, schema/<backend>/ and server/kinds/', () => {
    expect(backendWordViolations()).toEqual([]);
  });

  it('should leave out of the rule only files that still name a backend (a closed gap leaves the list)', () => {
    for (const f of NOT_YET_COVERED) expect({ file: f, named: backendWordViolations([f]).length > 0 }).toEqual({ file: f, named: true });
  });
});

/**
 * Adapters know no GraphQL argument: they name fields relative to the input they were given
 * (`nomad.nativeId`, `cascade`) and the resolver layer places them (`resolvers/input-fields.ts`).
 * So no string in `adapters/` is an argument path: `'input'` or anything naming `input.<field>`.
 */
function argumentPathLiterals(text: string): string[] {
  const literals = [...text.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) => m[0].slice(1, -1).replace(/\$\{[^}]*\}/g, ''));
  return literals.filter((l) => l === 'input' || /(^|[^\w$])input\.[A-Za-z_]/.test(l));
}

describe('argument paths stay in the resolvers', () => {
  it('should find argument paths where they are written', () => {
    expect(argumentPathLiterals(`f(x, 'input.nomad.nativeId'); g('input'); h(\`needs input.sizeBytes \${n}\`); k(\`\${input.volumeId}\`, 'the input', "inputs")`)).toEqual(['input.nomad.nativeId', 'input', 'needs input.sizeBytes ']);
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
  const text = source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const at = text.search(/^export class /m);
  if (at < 0) return [`${file}: no exported class`];
  const own = [...text.slice(0, at).matchAll(/^(?:export\s+)?(?:async\s+)?function\s+(\w+)/gm)].map((m) => `${file}: function ${m[1]}`);
  const body = text.slice(at);
  const logic = [...body.matchAll(/\b(?:if|for|while|switch|try|catch|await|function)\b|=>/g)].map((m) => `${file}:${text.slice(0, at + m.index).split('\n').length}: ${m[0]}`);
  return [...own, ...logic];
}

describe('backend folders have one shape', () => {
  it('should give every backend folder module.ts, backend.ts, access.ts, errors.ts and watch/', () => {
    expect(BACKEND_FOLDERS).toEqual(expect.arrayContaining(['nomad', 'openstack', 'memory']));
    const missing = BACKEND_FOLDERS.flatMap((b) => BACKEND_FOLDER_FILES.filter((f) => !existsSync(join(root, 'adapters', b, f))).map((f) => `adapters/${b}/${f}`));
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
    expect(delegationViolations('sample.ts', sample)).toEqual(['sample.ts: function load', 'sample.ts:6: if', 'sample.ts:10: =>']);
  });
});

describe('module size', () => {
  it('should keep every source file outside simulators/ and generated code at 400 lines or fewer', () => {
    const tracked = ['adapters', 'domain', 'resolvers', 'server', 'subscriptions', 'schema', 'bench', 'scripts', 'test'].flatMap((d) => files(d));
    const long = tracked.filter((f) => readFileSync(join(root, f), 'utf8').split('\n').length > 400);
    expect(long).toEqual([]);
  });
});
