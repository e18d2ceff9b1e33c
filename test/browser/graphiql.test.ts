/**
 * The bundled GraphiQL in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) against the demo gateway: it renders, runs a typed query and a README
 * mutation with a token header, starts an OpenStack attach and follows its tracked operation to
 * the end with the demo's pre-filled headers, runs a subscription over graphql-ws on the same path (a stub
 * server stands in until the gateway offers one), and loads nothing from off the machine.
 * Chromium is also told that no host name resolves, so a CDN load would fail here as it would
 * air-gapped, besides being caught by the request log and the page's CSP.
 *
 * Skipped only when /usr/bin/chromium is absent, saying so in a warning and the suite's name.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { buildGraphiQL } from '../../scripts/build-graphiql';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import { createGraphiQLHandler } from '../../server/graphiql';
import type { GraphiQLManifest } from '../../server/graphiql/manifest';
import { readmeTabs } from '../../server/graphiql/readme-tabs';
import { createLogger } from '../../server/logger';
import { startFront, type Front } from './front';

const CHROMIUM = '/usr/bin/chromium';
// `npm test` installs Debian's chromium first (scripts/system-deps.sh); without it this fails.
if (!existsSync(CHROMIUM))
  throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (npm test does this as root)`);

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Air gap: every host but the loopback address the page is opened on fails to resolve.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Stands in for the gateway's future graphql-ws endpoint on the same path, to show the page's
 * subscription client works once the server offers one: three ticks, naming the headers the
 * client sent as its connection_init payload.
 */
function subscriptionStub(seen: unknown[]): { wss: WebSocketServer; close(): Promise<void> } {
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString, resolve: () => 'ok' } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        ticks: {
          type: GraphQLString,
          subscribe: async function* (_root: unknown, _args: unknown, ctx: { params: Record<string, unknown> }) {
            for (let i = 1; i <= 3; i++) yield { ticks: `tick ${i} with ${Object.keys(ctx.params ?? {}).join(',')}` };
          },
        },
      },
    }),
  });
  const wss = new WebSocketServer({ noServer: true });
  const server = useServer(
    {
      schema,
      context: (ctx) => ({ params: ctx.connectionParams }),
      onConnect: (ctx) => void seen.push(ctx.connectionParams),
    },
    wss,
  );
  return { wss, close: async () => server.dispose() };
}

describe('GraphiQL in headless Chromium', () => {
  let work: string;
  let manifest: GraphiQLManifest;
  let demo: DemoBackends;
  let gateway: RunningGateway;
  let front: Front;
  let context: BrowserContext;
  let page: Page;
  let stub: ReturnType<typeof subscriptionStub>;
  const requested: string[] = [];
  const problems: string[] = [];
  const connectionParams: unknown[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'graphiql-test-'));
    // The real bundle, built the way `npm run build` builds it, into a folder of this test's own.
    manifest = await buildGraphiQL({ outDir: join(work, 'assets') });
    demo = await startDemoBackends();
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry: createRegistry(demo.backends),
      logger: createLogger('silent'),
    });
    stub = subscriptionStub(connectionParams);
    front = await startFront(
      createGraphiQLHandler({
        endpointPath: '/graphql',
        assetsDir: join(work, 'assets'),
        defaultHeaders: demo.graphiqlHeaders,
      }),
      gateway.port,
      (req, socket, head) => {
        if (new URL(req.url ?? '/', 'http://front.invalid').pathname !== '/graphql') return void socket.destroy();
        stub.wss.handleUpgrade(req, socket, head, (ws) => stub.wss.emit('connection', ws, req));
      },
    );
    context = await chromium.launchPersistentContext(join(work, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
    // Context-wide, so the Monaco workers' script loads are seen too.
    context.on('request', (r) => requested.push(r.url()));
    page = context.pages()[0] ?? (await context.newPage());
    // Fail a step in seconds, well inside jest's 30 s per test.
    page.setDefaultTimeout(10_000);
    page.on('websocket', (ws) => requested.push(ws.url()));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      // A refused load (CSP, unresolvable host) is reported on the console.
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await stub?.close();
    await front?.close();
    await gateway?.stop();
    await demo?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  /**
   * Replaces an editor's whole text. Monaco auto-closes brackets and quotes as they are typed;
   * the closers always land after the cursor, so whatever follows it is deleted at the end.
   */
  const fill = async (editor: string, text: string): Promise<void> => {
    await page.locator(`${editor} .monaco-editor .view-lines`).first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(text);
    await page.keyboard.press('Shift+Control+End');
    await page.keyboard.press('Delete');
  };
  /**
   * An editor's rendered text, line by line. Monaco positions its line elements absolutely and
   * reuses them, so they are put in order by their offset; spaces are no-break spaces there.
   * (The project compiles without the DOM lib, hence the structural type.)
   */
  const editorText = (editor: string): Promise<string> =>
    page
      .locator(`${editor} .view-lines`)
      .first()
      .evaluate((el) =>
        [
          ...(
            el as unknown as {
              querySelectorAll(s: string): Iterable<{ textContent: string | null; style: { top: string } }>;
            }
          ).querySelectorAll('.view-line'),
        ]
          .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
          .map((l) => l.textContent ?? '')
          .join('\n')
          .replace(/\u00a0/g, ' '),
      );
  /** The same without any white space: the response pane wraps long values such as ids. */
  const squeezed = async (editor: string): Promise<string> => (await editorText(editor)).replace(/\s+/g, '');
  /**
   * GraphiQL re-parses the operation 100 ms after its text changes (typing or switching tabs)
   * and stores the text in the same step; a Run before that would still send the previous
   * tab's operation name. (`globalThis as any`: the project compiles without the DOM lib; a
   * string expression would be refused by the page's CSP, which allows no eval.)
   */
  const parsed = (text: string): Promise<unknown> =>
    page.waitForFunction((t) => ((globalThis as any).localStorage.getItem('graphiql:query') ?? '').includes(t), text);
  const run = async (operation: string): Promise<any> => {
    const answered = page.waitForResponse(
      (r) =>
        r.request().method() === 'POST' &&
        new URL(r.url()).pathname === '/graphql' &&
        (r.request().postData() ?? '').includes(operation),
    );
    await page.locator('.graphiql-execute-button').click();
    return (await answered).json();
  };

  it('should render GraphiQL with the README examples as tabs', async () => {
    const res = await page.goto(`${front.origin}/graphql`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.locator('.graphiql-container .graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
    await expect(page.title()).resolves.toBe('GraphiQL · volume gateway');
    const tabs = await page.locator('.graphiql-tab-button').allInnerTexts();
    // One per README block, titled by operation name; the README may grow, CreateVolume is used below.
    expect(tabs).toEqual(
      readmeTabs(join(__dirname, '..', '..', 'README.md')).map(
        (t) => /^(?:query|mutation|subscription) (\w+)/.exec(t.query)?.[1],
      ),
    );
    expect(tabs).toContain('CreateVolume');
    expect(await editorText('.graphiql-query-editor')).toContain('volumes(first: 20)');
  });

  it('should run a typed query and show the backends', async () => {
    await page.locator('.graphiql-tab-add').click();
    await fill('.graphiql-query-editor', '{ storageBackends { id } }');
    await parsed('{ storageBackends { id } }');
    const body = await run('storageBackends');
    expect(body).toEqual({
      data: { storageBackends: [{ id: 'nomad-east' }, { id: 'nomad-west' }, { id: 'openstack' }] },
    });
    await page.locator('.graphiql-response', { hasText: 'openstack' }).waitFor();
    expect(await squeezed('.graphiql-response')).toBe(
      '{"data":{"storageBackends":[{"id":"nomad-east"},{"id":"nomad-west"},{"id":"openstack"}]}}',
    );
  });

  it("should run the README's createVolume with the demo management token header", async () => {
    // What the README's example creates, read from it so the test follows the README.
    const readme = readmeTabs(join(__dirname, '..', '..', 'README.md')).find((t) =>
      t.query.startsWith('mutation CreateVolume'),
    )!.query;
    const backend = /backend: "([^"]+)"/.exec(readme)![1]!;
    const nativeId = /nativeId: "([^"]+)"/.exec(readme)![1]!;
    await page.locator('.graphiql-tab-button', { hasText: /^CreateVolume$/ }).click();
    await parsed('mutation CreateVolume');
    expect(await editorText('.graphiql-query-editor')).toContain('createVolume(input: {');
    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    await fill(
      '.graphiql-editor-tool .graphiql-editor:not(.hidden)',
      JSON.stringify({ [`X-Nomad-Token-${backend}`]: demo.kinds.nomad.tokens[backend]!.management }),
    );
    const body = await run('createVolume');
    expect(body.errors).toBeUndefined();
    const id: string = body.data.createVolume.volume.id;
    expect(body.data.createVolume.volume.nativeId).toBe(nativeId);
    await page.locator('.graphiql-response', { hasText: nativeId }).waitFor();
    expect(await squeezed('.graphiql-response')).toContain(`"id":"${id}"`);
    // The volume exists on the cluster, under the id the page showed.
    const check = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ volumeByNativeId(backend: "${backend}", nativeId: "${nativeId}") { id } }` }),
    });
    expect((await check.json()).data.volumeByNativeId.id).toBe(id);
    await page.screenshot({ path: join(tmpdir(), 'graphiql-browser-test.png') });
  });

  it("should start an attach and see its tracked operation's state when it asks, with the demo's pre-filled headers", async () => {
    // Demo region: volume backup-target and server batch-1 (simulators/openstack/demo.ts), both idle.
    const volumeId = encodeGlobalId({
      kind: 'Volume',
      backend: 'openstack',
      scope: demo.kinds.openstack.projectId,
      nativeId: 'd0000000-0000-4000-8000-000000000006',
    });
    const serverId = 'a0000000-0000-4000-8000-000000000004';
    const send = async (operation: string): Promise<{ body: any; token: string | undefined }> => {
      const answered = page.waitForResponse(
        (r) =>
          r.request().method() === 'POST' &&
          new URL(r.url()).pathname === '/graphql' &&
          (r.request().postData() ?? '').includes(operation),
      );
      await page.locator('.graphiql-execute-button').click();
      const res = await answered;
      return { body: await res.json(), token: res.request().headers()['x-auth-token'] };
    };
    await page.locator('.graphiql-tab-add').click();
    await fill(
      '.graphiql-query-editor',
      `mutation Attach { attachVolume(input: { volumeId: "${volumeId}", target: { server: { serverId: "${serverId}" } } }) { operation { id kind state } } }`,
    );
    await parsed('mutation Attach');
    const started = await send('attachVolume');
    // A new tab carries the demo headers the page was configured with: the Keystone token went along.
    expect(started.token).toBe(demo.kinds.openstack.token);
    expect(started.body.errors).toBeUndefined();
    const op = started.body.data.attachVolume.operation;
    expect(op.kind).toBe('ATTACH_VOLUME');
    await page.locator('.graphiql-response', { hasText: 'ATTACH_VOLUME' }).waitFor();

    // Asked again and again, as a user re-runs a query, until the gateway has driven it to the end.
    await page.locator('.graphiql-tab-add').click();
    await fill(
      '.graphiql-query-editor',
      `query Follow { volumeOperation(id: "${op.id}") { id kind state target { ... on Volume { id name status } } } }`,
    );
    await parsed('query Follow');
    const seen: string[] = [];
    for (let i = 0; i < 100 && !['SUCCEEDED', 'FAILED', 'TIMED_OUT'].includes(seen.at(-1) ?? ''); i++) {
      const { body } = await send('Follow');
      expect(body.errors).toBeUndefined();
      seen.push(body.data.volumeOperation.state);
    }
    expect(seen.at(-1)).toBe('SUCCEEDED');
    await page.locator('.graphiql-response', { hasText: 'SUCCEEDED' }).waitFor();
    expect(await squeezed('.graphiql-response')).toContain(
      `"target":{"id":"${volumeId}","name":"backup-target","status":"IN_USE"}`,
    );
  });

  it('should run subscriptions over graphql-ws on the same origin and path, headers as connection params', async () => {
    await page.locator('.graphiql-tab-add').click();
    await fill('.graphiql-query-editor', 'subscription Watch { ticks }');
    // Until parsed, the fetcher would route by the previous (query) document and use HTTP.
    await parsed('subscription Watch');
    await expect(page.locator('.graphiql-tab-active .graphiql-tab-button').innerText()).resolves.toBe('Watch');
    await fill('.graphiql-editor-tool .graphiql-editor:not(.hidden)', '{"X-Nomad-Token": "sub-secret"}');
    const socket = page.waitForEvent('websocket');
    await page.locator('.graphiql-execute-button').click();
    expect((await socket).url()).toBe(`ws://127.0.0.1:${front.port}/graphql`);
    await page.locator('.graphiql-response', { hasText: 'tick 3' }).waitFor();
    expect(await squeezed('.graphiql-response')).toBe('{"data":{"ticks":"tick3withX-Nomad-Token"}}');
    expect(connectionParams).toEqual([{ 'X-Nomad-Token': 'sub-secret' }]);
  });

  it("should open ?query=&variables= in a tab with both filled in, as the live page's remedy links send a demo problem's mutation", async () => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...demo.headers },
      body: JSON.stringify({
        query:
          '{ volumeProblems(filter: { kinds: [ERROR_STATE] }) { nodes { id remedies { mutation { document variables } } } } }',
      }),
    });
    const problem = (await res.json()).data.volumeProblems.nodes[0];
    const mutation = problem.remedies[0].mutation as { document: string; variables: string };
    const link = `${front.origin}/graphql?${new URLSearchParams({ query: mutation.document, variables: mutation.variables })}`;
    await page.goto(link);
    await page.locator('.graphiql-container .graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
    // A new active tab (GraphiQL writes its storage keys only on edits, so `parsed` cannot tell).
    await page.locator('.graphiql-query-editor', { hasText: 'resetCinderVolumeStatus' }).waitFor();
    expect(await squeezed('.graphiql-query-editor')).toBe(mutation.document.replace(/\s+/g, ''));
    await page.getByRole('button', { name: 'Variables', exact: true }).click();
    const volumeId = (JSON.parse(mutation.variables) as { input: { volumeId: string } }).input.volumeId;
    await page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden)', { hasText: volumeId }).waitFor();
  });

  it('should have loaded everything from the gateway origin and nothing from elsewhere', () => {
    const offLoopback = requested.filter((u) => !u.startsWith('data:') && !LOOPBACK.has(new URL(u).hostname));
    expect(offLoopback).toEqual([]);
    const assets = new Set(
      requested.filter((u) => u.includes('/graphiql/assets/')).map((u) => u.slice(u.lastIndexOf('/') + 1)),
    );
    expect([...assets].sort()).toEqual(Object.values(manifest.files).sort());
    expect(problems).toEqual([]);
  });
});
