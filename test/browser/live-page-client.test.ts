/**
 * The live page's subscription client in headless Chromium, against a graphql-ws server standing
 * in for the gateway's on the same path (as graphiql.test.ts does for GraphiQL), while the list
 * still comes from the real demo gateway over HTTP. The stand-in sends the events the test
 * chooses, so each step is seen for sure: ATTACHING in amber with the row highlighted, then
 * ATTACHED in green (screenshot pixels); coverage from SUBSCRIBED; a dropped socket resumed with
 * `since` = the last cursor; CURSOR_EXPIRED answered by listing again and subscribing afresh.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GraphQLError, parse } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { encodeGlobalId } from '../../adapters/ids';
import { buildLivePage } from '../../scripts/build-live';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import { createLivePageHandler } from '../../server/live';
import type { LiveEvent, LiveVolume } from '../../server/live/page/state';
import { createLogger } from '../../server/logger';
import { buildGatewaySchema } from '../../server/schema';
import { launch, type Browser } from './chromium';
import { startFront, type Front } from './front';
import { decodePng, shareOfColour } from './png';

const GREEN = '#1a7f37';
const AMBER = '#d4a72c';
const HIGHLIGHT = '#fff3b0';

/** A graphql-ws server whose `volumeChanged` yields SUBSCRIBED, then whatever `emit` sends. */
function standIn() {
  const subscribes: Array<{ since: string | null; params: unknown }> = [];
  const sinks = new Set<(e: LiveEvent) => void>();
  const sockets = new Set<WebSocket>();
  let expireNext = false;
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
  });
  const omitted = [{ backend: { id: 'nomad-west' }, reason: 'FAILED', code: 'BACKEND_UNAVAILABLE', message: 'down' }];
  const server = useServer(
    {
      schema: buildGatewaySchema(),
      onSubscribe: (ctx, _id, payload) => {
        const since = (payload.variables?.since as string | null | undefined) ?? null;
        subscribes.push({ since, params: ctx.connectionParams });
        if (since !== null && expireNext) {
          expireNext = false;
          return [new GraphQLError('the cursor is older than the retention', { extensions: { code: 'CURSOR_EXPIRED' } })];
        }
        // The stand-in answers by itself: no validation or execution against the schema.
        return { schema: buildGatewaySchema(), document: parse(payload.query), variableValues: { since } };
      },
      subscribe: (args) =>
        (async function* () {
          const since = (args.variableValues as { since: string | null }).since;
          const queue: LiveEvent[] = [{ type: 'SUBSCRIBED', cursor: since ?? 'c0', observedAt: new Date().toISOString(), volumeId: null, volume: null, previousStatus: null, attachment: null, changedFields: [], omittedBackends: omitted }];
          let wake: (() => void) | undefined;
          const sink = (e: LiveEvent): void => {
            queue.push(e);
            wake?.();
          };
          sinks.add(sink);
          try {
            for (;;) {
              while (queue.length > 0) yield { data: { volumeChanged: queue.shift() } };
              await new Promise<void>((r) => (wake = r));
            }
          } finally {
            sinks.delete(sink);
          }
        })(),
    },
    wss,
  );
  return {
    wss,
    subscribes,
    emit: (e: LiveEvent) => sinks.forEach((s) => s(e)),
    drop: () => sockets.forEach((s) => s.terminate()),
    expireNextResume: () => void (expireNext = true),
    close: async () => server.dispose(),
  };
}

describe('live page client against a stand-in graphql-ws server', () => {
  let work: string;
  let demo: DemoBackends;
  let gateway: RunningGateway;
  let front: Front;
  let stub: ReturnType<typeof standIn>;
  let b: Browser;
  const lists: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'live-client-test-'));
    await buildLivePage({ outDir: join(work, 'assets') });
    demo = await startDemoBackends({ activity: false });
    gateway = await startGateway({ config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 }, registry: createRegistry(demo.backends), logger: createLogger('silent') });
    stub = standIn();
    front = await startFront(createLivePageHandler({ assetsDir: join(work, 'assets'), defaultHeaders: demo.headers }), gateway.port, (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://front.invalid').pathname !== '/graphql') return void socket.destroy();
      stub.wss.handleUpgrade(req, socket, head, (ws) => stub.wss.emit('connection', ws, req));
    });
    b = await launch(work);
    b.page.on('request', (r) => {
      if (r.method() === 'POST' && (r.postData() ?? '').includes('LiveVolumes')) lists.push(r.url());
    });
  }, 60_000);

  afterAll(async () => {
    await b?.context.close();
    await stub?.close();
    await front?.close();
    await gateway?.stop();
    await demo?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  const nativeId = 'd0000000-0000-4000-8000-000000000007'; // golden-image
  const target = `#volumes tr[data-native-id="${nativeId}"]`;
  const volume = (over: Partial<LiveVolume>): LiveVolume => ({
    id: encodeGlobalId({ kind: 'Volume', backend: 'openstack', scope: demo.openstack.projectId, nativeId }),
    backend: { id: 'openstack' },
    namespace: demo.openstack.projectId,
    nativeId,
    name: 'golden-image',
    status: 'AVAILABLE',
    attachments: [],
    ...over,
  });
  const consumer = { __typename: 'VolumeServerConsumer', serverId: 'a0000000-0000-4000-8000-000000000004', name: 'batch-1' };
  const event = (type: string, cursor: string, over: Partial<LiveEvent>): LiveEvent => ({ type, cursor, observedAt: new Date().toISOString(), volumeId: null, volume: null, previousStatus: null, attachment: null, changedFields: [], omittedBackends: [], ...over });
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    for (const deadline = Date.now() + 15_000; !ok(); await new Promise((r) => setTimeout(r, 25))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(stub.subscribes.map((s) => s.since))}, page: ${await b.page.locator('#connection').innerText()}`);
    }
  };

  it('should subscribe with the headers as connection params and show the coverage SUBSCRIBED reports', async () => {
    await b.page.goto(`${front.origin}/live`);
    await b.page.locator('#connection[data-state="live"]').waitFor();
    await b.page.locator(target).waitFor();
    expect(stub.subscribes).toEqual([{ since: null, params: demo.headers }]);
    await expect(b.page.locator('#coverage').innerText()).resolves.toBe('Coverage: not covered: nomad-west (FAILED BACKEND_UNAVAILABLE)');
  });

  it('should show ATTACHING in amber with the row highlighted, then ATTACHED in green', async () => {
    stub.emit(event('ATTACHING', 'c1', { volumeId: volume({}).id, volume: volume({}), attachment: { id: 'pending', state: 'ATTACHING', consumer } }));
    await b.page.locator(`${target}.changed .badge.attachment[data-state="ATTACHING"]`).waitFor();
    const amber = decodePng(await b.page.locator(`${target} .badge.attachment`).screenshot());
    expect(shareOfColour(amber, AMBER)).toBeGreaterThan(0.5);
    expect(shareOfColour(decodePng(await b.page.locator(target).screenshot()), HIGHLIGHT)).toBeGreaterThan(0.2);
    const done = { id: 'real', state: 'ATTACHED', consumer };
    stub.emit(event('ATTACHED', 'c2', { volumeId: volume({}).id, volume: volume({ status: 'IN_USE', attachments: [done] }), attachment: done, previousStatus: 'AVAILABLE' }));
    await b.page.locator(`${target} .badge.attachment[data-state="ATTACHED"]`).waitFor();
    expect(await b.page.locator(`${target} .badge.attachment`).count()).toBe(1);
    const green = decodePng(await b.page.locator(`${target} .badge.attachment`).screenshot());
    expect(shareOfColour(green, GREEN)).toBeGreaterThan(0.5);
    expect(shareOfColour(green, AMBER)).toBeLessThan(0.05);
    await expect(b.page.locator(`${target} .badge.status`).innerText()).resolves.toBe('IN_USE');
    await expect(b.page.locator('#events li').first().innerText()).resolves.toMatch(/ATTACHED golden-image \(openstack\)$/);
    // The highlight fades.
    await b.page.locator(`${target}:not(.changed)`).waitFor();
  });

  it('should resume after a dropped socket from the last cursor', async () => {
    stub.drop();
    await until('a resumed subscription', () => stub.subscribes.length === 2);
    expect(stub.subscribes[1]).toEqual({ since: 'c2', params: demo.headers });
    await b.page.locator('#connection[data-state="live"]').waitFor();
    // The table was kept, not listed again.
    expect(lists).toHaveLength(1);
  });

  it('should list again and subscribe without since when the cursor has expired', async () => {
    stub.expireNextResume();
    stub.drop();
    await until('a fresh subscription', () => stub.subscribes.length === 4);
    expect(stub.subscribes.slice(2).map((s) => s.since)).toEqual(['c2', null]);
    expect(lists).toHaveLength(2);
    await expect(b.page.locator('#notice').innerText()).resolves.toBe('Missed too much while away: listed again.');
    // The fresh list is the backend's truth again: golden-image was never really attached.
    await expect(b.page.locator(`${target} .badge.status`).innerText()).resolves.toBe('AVAILABLE');
    await b.page.locator('#connection[data-state="live"]').waitFor();
  });

  it('should have loaded nothing from off the machine, without errors', () => {
    expect(b.offLoopback()).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
