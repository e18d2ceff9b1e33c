/**
 * Issue 18, item 1: what the gateway knows about a kind comes from its module. Every case loops
 * over the registry, so a new backend's module is checked the same way: its credential header
 * (shared and per-backend) is read, allowed by CORS, redacted and shown in GraphiQL and /live;
 * its kind is parsed through the registry; its URL is required when it needs one.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { perBackendHeader } from '../../adapters/contract/module';
import { BACKEND_MODULES } from '../../server/kinds';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { credentialsFromHeaders, isCredentialHeader } from '../../server/credentials';
import { DEFAULT_HEADERS } from '../../server/graphiql';
import { REDACTED_PATHS } from '../../server/logger';
import { renderLivePage } from '../../server/live/page';
import type { BackendRegistry } from '../../domain/registry';
import { startGatewayProcess } from '../support/gateway-process';
import { disposeAll, startGatewayFor, startNomad } from '../support/harness';
import { root } from '../support/source-imports';

afterAll(disposeAll);

const kinds = BACKEND_MODULES.map((m) => [m.kind, m] as const);

/** Two backends of every kind, by id; only `all` is read by credentialsFromHeaders. */
const registry = {
  all: BACKEND_MODULES.flatMap((m) => [`${m.kind}-a`, `${m.kind}-b`].map((id) => ({ id, kind: m.modelKind }))),
} as unknown as BackendRegistry;

describe.each(kinds)('the %s module', (kind, m) => {
  it('should give its backends the shared header and let the per-backend header win', () => {
    const creds = credentialsFromHeaders(
      {
        [m.credential.header.toLowerCase()]: 'shared',
        [perBackendHeader(m.credential, `${kind}-b`).toLowerCase()]: 'own',
      },
      registry,
    );
    expect(creds.get(`${kind}-a`)).toEqual({ token: 'shared' });
    expect(creds.get(`${kind}-b`)).toEqual({ token: 'own' });
    // Another kind's backends never get this kind's header.
    for (const other of BACKEND_MODULES.filter((o) => o !== m && o.credential.header !== m.credential.header))
      expect(creds.get(`${other.kind}-a`)).toEqual({ token: undefined });
  });

  it('should mark its header as a credential (caller fingerprint, connection_init) and redact it in logs', () => {
    expect(isCredentialHeader(m.credential.header)).toBe(true);
    expect(isCredentialHeader(perBackendHeader(m.credential, 'east'))).toBe(true);
    expect(isCredentialHeader(`${m.credential.header}-`)).toBe(false);
    expect(REDACTED_PATHS).toContain(`headers["${m.credential.header.toLowerCase()}"]`);
  });

  it("should show its header in GraphiQL's header editor and /live's credential help", () => {
    expect(DEFAULT_HEADERS).toContain(`// ${JSON.stringify(m.credential.header)}:`);
    expect(DEFAULT_HEADERS).toContain(`// ${JSON.stringify(perBackendHeader(m.credential, '<backend-id>'))}:`);
    const page = renderLivePage({
      title: 't',
      assetsPath: '/a',
      manifest: { files: { style: 's.css', script: 'm.js' } } as never,
      config: { endpointPath: '/graphql', defaultHeaders: null, demo: false },
    });
    expect(page).toContain(`<code>${m.credential.header}[-&lt;backend&gt;]</code>`);
  });

  it('should be parsed through the registry, its URL required when it needs one', () => {
    const entry = m.needsUrl ? `lab=${kind}@http://127.0.0.1:1` : `lab=${kind}`;
    expect(loadConfig({ GATEWAY_BACKENDS: entry }).backends).toEqual([expect.objectContaining({ id: 'lab', kind })]);
    if (!m.needsUrl) return;
    expect(() => loadConfig({ GATEWAY_BACKENDS: `lab=${kind}` })).toThrow(
      new ConfigError(
        'backends[0].url',
        `is missing: kind ${kind} needs a URL (GATEWAY_BACKENDS entry id=${kind}@URL, or "url" in the file)`,
      ),
    );
  });
});

it("should list the registry's kinds when a kind is unknown", () => {
  expect(() => loadConfig({ GATEWAY_BACKENDS: 'east=consul@http://x' })).toThrow(
    `backends[0].kind: unknown backend kind "consul" (known: ${BACKEND_MODULES.map((m) => m.kind).join(', ')})`,
  );
});

it("should allow every kind's headers in a CORS preflight, shared and per backend", async () => {
  const sim = await startNomad();
  const gw = await startGatewayFor([{ id: 'east', url: sim.url }], {
    http: { cors: { origins: ['https://app.example.com'], credentials: true, maxAgeSeconds: 60 } },
  });
  const asked = BACKEND_MODULES.flatMap((m) => [m.credential.header, perBackendHeader(m.credential, 'East')]);
  const res = await fetch(gw.gateway.url, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': asked.join(', '),
    },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-headers')!.split(', ')).toEqual(
    expect.arrayContaining(asked.map((h) => h.toLowerCase())),
  );
});

it("should name every kind's own variables when production has no backend", () => {
  const triggers = BACKEND_MODULES.flatMap((m) => (m.nativeEnv ? [m.nativeEnv.trigger] : []));
  expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
    `set ${['GATEWAY_BACKENDS (id=kind@url,…)', ...triggers].join(', ')} or the config file's "backends"`,
  );
});

/**
 * Issue 28, part 1: a backend is one registration. A fourth kind, `scratch`, made from the memory
 * backend in a copy of the source tree: its folders (adapters/memory/ and schema/memory/, with every
 * name derived from the kind: `ScratchVolumeDetails`, `X-Scratch-Token`, `SCRATCH`) and one line in
 * server/kinds/registered.ts. Nothing else changes; codegen maps its types, and the gateway
 * serves it over HTTP beside the memory kind it was made from.
 */
describe('a fourth kind, made from the memory backend', () => {
  const KIND = 'scratch';
  const REGISTERED = 'server/kinds/registered.ts';
  const LINE = `export { ${KIND}Module as ${KIND} } from '../../adapters/${KIND}/module';`;
  /** What the copy takes of the repository: the sources, the contract suite and its harness. */
  const TREE = [
    'adapters',
    'domain',
    'resolvers',
    'schema',
    'server',
    'simulators',
    'subscriptions',
    'test/contract',
    'test/support',
    'codegen.ts',
    'package.json',
    'tsconfig.json',
    'README.md',
  ];
  let tree: string;
  let changed: string[];
  let gw: ReturnType<typeof startGatewayProcess>;
  let url: string;

  /** `src` copied to `dst` under the new kind: memory → scratch in every file name and text. */
  function copyAsKind(src: string, dst: string): void {
    const rename = (s: string): string =>
      s
        .replace(/memory/g, KIND)
        .replace(/Memory/g, 'Scratch')
        .replace(/MEMORY/g, KIND.toUpperCase());
    mkdirSync(dst, { recursive: true });
    for (const e of readdirSync(src, { withFileTypes: true })) {
      if (e.isDirectory()) copyAsKind(join(src, e.name), join(dst, rename(e.name)));
      else writeFileSync(join(dst, rename(e.name)), rename(readFileSync(join(src, e.name), 'utf8')));
    }
  }

  /** The copy's files, relative, that differ from the repository's (the new kind's folders left out). */
  function changedFiles(dir = ''): string[] {
    return readdirSync(join(tree, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = join(dir, e.name);
      if (rel === 'node_modules' || [`adapters/${KIND}`, `schema/${KIND}`].includes(rel)) return [];
      if (e.isDirectory()) return changedFiles(rel);
      return readFileSync(join(tree, rel), 'utf8') === readFileSync(join(root, rel), 'utf8') ? [] : [rel];
    });
  }

  const gql = async (query: string, headers: Record<string, string>): Promise<any> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return res.json();
  };
  const run = (args: string[]): string =>
    execFileSync(args[0]!, args.slice(1), { cwd: tree, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** Codegen over the copy: started with the gateway, awaited by the test that needs it. */
  let generated: Promise<string>;

  beforeAll(async () => {
    tree = mkdtempSync(join(tmpdir(), 'fourth-kind-'));
    for (const part of TREE) cpSync(join(root, part), join(tree, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'dir');
    for (const top of ['adapters', 'schema']) copyAsKind(join(root, top, 'memory'), join(tree, top, KIND));
    appendFileSync(join(tree, REGISTERED), `${LINE}\n`);
    changed = changedFiles();
    const npx = (...args: string[]): Promise<string> =>
      promisify(execFile)('npx', args, { cwd: tree, encoding: 'utf8' }).then((r) => r.stdout);
    generated = npx('graphql-codegen', '--config', 'codegen.ts');
    generated.catch(() => undefined); // awaited (and reported) by its test
    gw = startGatewayProcess(
      { GATEWAY_BACKENDS: `lab=${KIND},mem=memory`, GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '0' },
      { tree },
    );
    url = await gw.serving();
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    await generated?.catch(() => undefined);
    rmSync(tree, { recursive: true, force: true });
  });

  it('should need one line outside its folders: its registration', () => {
    expect(changed).toEqual([REGISTERED]);
    expect(readFileSync(join(tree, REGISTERED), 'utf8')).toBe(
      `${readFileSync(join(root, REGISTERED), 'utf8')}${LINE}\n`,
    );
  });

  it('should be served over HTTP beside the kind it was made from, with its own types and credential header', async () => {
    const backends = await gql('{ storageBackends { id kind capabilities } }', {});
    expect(backends.data.storageBackends.map((b: any) => [b.id, b.kind])).toEqual([
      ['lab', 'SCRATCH'],
      ['mem', 'MEMORY'],
    ]);
    expect(backends.data.storageBackends[0].capabilities).toEqual(backends.data.storageBackends[1].capabilities);
    const list = await gql(
      '{ volumes(first: 100, filter: { backends: ["lab"] }) { nodes { backend { id } details { __typename ... on ScratchVolumeDetails { snapshotCount } } attachments { consumer { __typename } } } omittedBackends { backend { id } } } }',
      { 'X-Scratch-Token': 'lab-admin' },
    );
    expect(list.errors).toBeUndefined();
    const nodes = list.data.volumes.nodes as any[];
    expect(nodes.length).toBeGreaterThan(0);
    expect(new Set(nodes.map((n) => `${n.backend.id} ${n.details.__typename}`))).toEqual(
      new Set(['lab ScratchVolumeDetails']),
    );
    expect(new Set(nodes.flatMap((n) => n.attachments.map((a: any) => a.consumer.__typename)))).toEqual(
      new Set(['VolumeHostConsumer']),
    );
    // Its header is its own: the memory kind's token header does not reach it, its per-backend form does.
    const create =
      'mutation { createVolume(input: { backend: "lab", namespace: "dev", name: "made-here", sizeBytes: 1073741824 }) { volume { name details { __typename } } operation { state } } }';
    const refused = await gql(create, { 'X-Memory-Token': 'lab-admin' });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ backend: 'lab' });
    const made = await gql(create, { 'X-Scratch-Token-lab': 'lab-admin' });
    expect(made).toEqual({
      data: {
        createVolume: {
          volume: { name: 'made-here', details: { __typename: 'ScratchVolumeDetails' } },
          operation: { state: 'SUCCEEDED' },
        },
      },
    });
  });

  it("should be in every list derived from the registrations (modules, help, contract fixtures) and in codegen's mappers", async () => {
    const derived = JSON.parse(
      run([
        process.execPath,
        '--import',
        'tsx',
        '-e',
        "const k = require('./server/kinds'); console.log(JSON.stringify({ kinds: k.BACKEND_MODULES.map((m) => m.kind), fixtures: require('./test/contract/backends').FIXTURES.map((f) => f.name), help: require('./server/help').helpText().split('\\n').filter((l) => l.includes('Scratch')) }))",
      ]),
    );
    expect(derived).toEqual({
      kinds: ['nomad', 'openstack', 'memory', KIND],
      fixtures: ['nomad (simulator)', 'openstack (simulator)', 'memory', KIND],
      help: [
        expect.stringMatching(/^GraphQL gateway for block-storage volumes: Nomad, OpenStack, Memory, Scratch\.$/),
        expect.stringContaining('callers send X-Scratch-Token[-<backend id>]'),
      ],
    });
    await generated;
    expect(readFileSync(join(tree, 'schema/generated/resolvers-types.ts'), 'utf8')).toContain(
      `import type { ScratchVolumeDetails as ScratchVolumeDetailsModel } from '../../adapters/${KIND}/model';`,
    );
  }, 120_000);
});
