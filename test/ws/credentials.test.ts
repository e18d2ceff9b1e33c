/**
 * Issue 17, items 2 and 3 (docs/reliability.md R2, R3): a subscriber's credential is checked when
 * the subscription starts, a backend that refuses it is left out as an HTTP list leaves it out,
 * and one that stops accepting it later is dropped with BACKEND_DROPPED while the others go on.
 * A real gateway over two Nomad simulators (and an OpenStack one), talked to over graphql-ws.
 */
import {
  disposeAll,
  MGMT,
  OS,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
} from '../support/harness';
import { until } from '../support/until';
import { ackedClient, claim, eventOf, startWsGateway, stopAll, subscribed, type RawClient } from './helpers';

const SUB =
  'subscription { volumeChanged { type cursor volumeId volume { backend { id } } omittedBackends { backend { id } reason code message } } }';
const LIST = '{ volumes { nodes { id } omittedBackends { backend { id } reason code } } }';
/** A token known to west only. */
const WEST_ONLY = 'west-only-token';
/** A token both clusters know (until one revokes it). */
const SHARED = 'shared-token';

const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await stopAll();
  await disposeAll();
});

async function twoClusters() {
  const east = await startNomad();
  const west = await startNomad();
  seedVolumes(east, 2, 'default', 'e');
  seedVolumes(west, 2, 'default', 'w');
  seedVolumes(west, 1, 'analytics', 'a');
  west.addToken({ secret: WEST_ONLY, namespaces: { default: 'read' } });
  for (const sim of [east, west]) sim.addToken({ secret: SHARED, namespaces: { default: 'read', analytics: 'read' } });
  const gw = await startGatewayFor([
    { id: 'east', url: east.url, token: MGMT },
    { id: 'west', url: west.url, token: MGMT },
  ]);
  await waitWatchers(gw, ['east', 'west']);
  return { east, west, gw, wsUrl: gw.gateway.url.replace(/^http/, 'ws') };
}

/** Waits until the watchers of `ids` have read their first view (`/readyz` lists them). */
async function waitWatchers(gw: GatewayUnderTest, ids: string[]): Promise<void> {
  await until(async () => {
    const r = (await (await fetch(gw.gateway.url.replace('/graphql', '/readyz'))).json()) as {
      watchers: Array<{ backend: string; watcher: { currentAt: number | null } | null }>;
    };
    return ids.every((id) => r.watchers.find((w) => w.backend === id)?.watcher?.currentAt != null);
  }, "the watchers' first views");
}

async function client(wsUrl: string, payload: Record<string, string>): Promise<RawClient> {
  const c = await ackedClient(wsUrl, payload);
  clients.push(c);
  return c;
}

describe("a subscriber's credential, checked when the subscription starts (R2)", () => {
  it('should end a subscription at once with UNAUTHENTICATED when every backend refuses the token, with no change needed', async () => {
    const { wsUrl } = await twoClusters();
    const c = await client(wsUrl, { 'X-Nomad-Token': 'garbage-token' });
    c.send({ id: 's', type: 'subscribe', payload: { query: SUB } });
    // Nothing changes on either cluster: the answer comes from the start's checks alone.
    const m = await c.nextFor('s', 10_000);
    expect(m).toMatchObject({
      id: 's',
      type: 'next',
      payload: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] },
    });
    expect(await c.nextFor('s')).toEqual({ id: 's', type: 'complete' });
  });

  it('should name a backend that refuses the token in SUBSCRIBED (FAILED, UNAUTHENTICATED) as an HTTP list does, and serve the others', async () => {
    const { east, west, gw, wsUrl } = await twoClusters();
    // HTTP leaves east out as FAILED; its code is FORBIDDEN there (a list's 403 cannot tell an
    // unknown token from a missing policy), UNAUTHENTICATED here (the start asks Nomad whether it knows the token).
    const http = await gw.gql(LIST, {}, { 'x-nomad-token': WEST_ONLY });
    expect(http.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'east' }, reason: 'FAILED', code: 'FORBIDDEN' },
    ]);
    const c = await client(wsUrl, { 'X-Nomad-Token': WEST_ONLY });
    const s = await subscribed(c, 's', SUB);
    expect(s.omittedBackends).toEqual([
      {
        backend: { id: 'east' },
        reason: 'FAILED',
        code: 'UNAUTHENTICATED',
        message: expect.stringContaining('backend "east" refused the subscription\'s credential'),
      },
    ]);
    expect(JSON.stringify(s)).not.toContain(WEST_ONLY);
    // An east change passes it by (no UNAUTHENTICATED end); west's arrive.
    claim(east, ['e-000']);
    claim(west, ['w-000']);
    const ev = await eventOf(c, 's', 'CLAIMED');
    expect(ev.volume.backend.id).toBe('west');
  });

  it("should name a garbage Keystone token's region in SUBSCRIBED, and end a subscription to that region alone at once", async () => {
    const nomad = await startNomad();
    const os = await startOpenStack();
    const gw = await startGatewayFor([
      { id: 'east', url: nomad.url, token: MGMT },
      os.backend('os', {
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        watchFastMs: 50,
        watchSlowMs: 100,
      }),
    ]);
    const wsUrl = gw.gateway.url.replace(/^http/, 'ws');
    const c = await client(wsUrl, { 'X-Nomad-Token': MGMT, 'X-Auth-Token': 'gAAAAAgarbage' });
    const s = await subscribed(c, 'both', SUB);
    expect(s.omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'FAILED', code: 'UNAUTHENTICATED', message: expect.any(String) },
    ]);
    c.send({
      id: 'os',
      type: 'subscribe',
      payload: { query: 'subscription { volumeChanged(filter: { backends: ["os"] }) { type } }' },
    });
    expect(await c.nextFor('os', 10_000)).toMatchObject({
      type: 'next',
      payload: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] },
    });
    expect(await c.nextFor('os')).toEqual({ id: 'os', type: 'complete' });
  });
});

describe('the start checks one address may send', () => {
  it('should refuse starts past LIVE_MAX_START_CHECKS_PER_ADDRESS with SUBSCRIPTION_LIMIT and a retry time, sending no check; known credentials cost none', async () => {
    const gw = await startWsGateway({ live: { maxStartChecksPerAddress: 3 } });
    const checks = (): number => gw.sim.requests().filter((r) => r.path === '/v1/acl/token/self').length;
    const before = checks();
    const known = await client(gw.wsUrl, { 'X-Nomad-Token': MGMT });
    await subscribed(known, 'k1', SUB);
    for (let i = 0; i < 2; i++) {
      const c = await client(gw.wsUrl, { 'X-Nomad-Token': `junk-${i}` });
      c.send({ id: 's', type: 'subscribe', payload: { query: SUB } });
      expect((await c.nextFor('s')).payload.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    const c = await client(gw.wsUrl, { 'X-Nomad-Token': 'junk-3' });
    c.send({ id: 's', type: 'subscribe', payload: { query: SUB } });
    expect((await c.nextFor('s')).payload.errors[0].extensions).toMatchObject({
      code: 'SUBSCRIPTION_LIMIT',
      limit: 'maxStartChecksPerAddress',
      max: 3,
      retryAfterSeconds: expect.any(Number),
    });
    expect(checks() - before).toBe(3);
    // A credential the access cache knows costs no check.
    await subscribed(known, 'k2', SUB);
    expect(checks() - before).toBe(3);
  });
});

describe('a backend that stops accepting the credential (R3)', () => {
  it("should drop that backend with BACKEND_DROPPED naming it and why, and keep delivering the others' changes; the last one ends it", async () => {
    const { east, west, wsUrl } = await twoClusters();
    const c = await client(wsUrl, { 'X-Nomad-Token': SHARED });
    expect((await subscribed(c, 's', SUB)).omittedBackends).toEqual([]);
    east.removeToken(SHARED);
    claim(east, ['e-000']);
    const dropped = await eventOf(c, 's', 'BACKEND_DROPPED');
    expect(dropped).toMatchObject({
      volumeId: null,
      volume: null,
      omittedBackends: [{ backend: { id: 'east' }, reason: 'FAILED', code: 'UNAUTHENTICATED' }],
    });
    expect(typeof dropped.cursor).toBe('string');
    claim(east, ['e-001']);
    claim(west, ['w-000']);
    const ev = await eventOf(c, 's', 'CLAIMED');
    expect(ev.volume.backend.id).toBe('west');
    // No backend left: the subscription ends with UNAUTHENTICATED. (A change in another namespace:
    // west's grant for `default` is cached for LIVE_ACCESS_TTL_MS, as documented.)
    west.removeToken(SHARED);
    west.placeAllocation({
      jobId: 'a',
      namespace: 'analytics',
      nodeId: 'node-1111',
      volumes: [{ volumeId: 'a-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    });
    expect(await c.next(15_000, (m) => m.id === 's' && m.payload?.errors)).toMatchObject({
      type: 'next',
      payload: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] },
    });
    expect(await c.next(15_000, (m) => m.id === 's' && m.type === 'complete')).toEqual({ id: 's', type: 'complete' });
  });
});
