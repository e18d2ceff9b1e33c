/**
 * Issue 9 item 2 over HTTP: a request with a header value undici would refuse can no longer wedge
 * a backend's pool, a backend that never answers gives a timely BACKEND_TIMEOUT (and /readyz and
 * `storageBackends { health }` answer), and a client hanging up mid-query does not churn connections.
 */
import { until } from '../support/until';
import { request as httpRequest } from 'node:http';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const SNAPSHOTS = `query($s: [StorageKeyValueInput!]) { volumeSnapshots(backend: "east", filter: { plugin: "aws-ebs0" }, secrets: $s) { nodes { id } } }`;
const LIST = '{ volumes(first: 5) { nodes { nativeId } } }';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** POST with raw header bytes (fetch refuses to send some of the values under test). */
function postRaw(url: string, headers: Record<string, string>, query: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query });
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('hostile header values', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 3);
    sim.addSnapshot('aws-ebs0', { ID: 'snap-1', ExternalSourceVolumeID: 'ext-default-vol-000', SizeBytes: 1024 });
    // A pool of 4: the bad requests below outnumber its slots five times over.
    gw = await startGatewayFor([{ id: 'east', url: sim.url, maxConnections: 4, timeoutMs: 5_000 }]);
  });
  afterAll(disposeAll);

  it.each([
    ['an emoji', '💥'],
    ['a newline', 'a\nb'],
    ['a carriage return and a header', 'a\r\nX-Injected: 1'],
  ])(
    'should answer BAD_USER_INPUT for a CSI secret with %s, 20 times, without calling the backend, and keep serving',
    async (_what, value) => {
      sim.clearRequests();
      for (let i = 0; i < 20; i++) {
        const res = await gw.gql(SNAPSHOTS, { s: [{ key: 'k', value }] }, admin);
        expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(res.body.errors[0].extensions.retryable).toBe(false);
        expect(res.body.errors[0].message).not.toContain(value);
      }
      expect(sim.requests().filter((r) => r.path.includes('snapshot'))).toEqual([]);
      const good = await gw.gql(SNAPSHOTS, { s: [{ key: 'k', value: 'fine' }] }, admin);
      expect(good.body.errors).toBeUndefined();
      expect(good.body.data.volumeSnapshots.nodes).toHaveLength(1);
      const list = await gw.gql(LIST, undefined, admin);
      expect(list.body.errors).toBeUndefined();
      expect(list.body.data.volumes.nodes).toHaveLength(3);
    },
  );

  it.each([
    ['a tab', 'x\ty'],
    // What a client sending 💥 as UTF-8 bytes looks like to Node: Latin-1 characters with C1 controls.
    ['UTF-8 bytes of an emoji', Buffer.from('💥', 'utf8').toString('latin1')],
  ])(
    'should answer BAD_USER_INPUT naming the header for an X-Nomad-Token with %s, never echoing it',
    async (_what, token) => {
      sim.clearRequests();
      for (const header of ['x-nomad-token', 'x-nomad-token-east']) {
        const res = await postRaw(gw.gateway.url, { [header]: token }, LIST);
        expect(res.status).toBe(400);
        expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(res.body.errors[0].message).toContain(header);
        expect(res.body.errors[0].message).not.toContain(token);
      }
      expect(sim.requests()).toEqual([]);
    },
  );
});

describe('a backend that never answers', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 3);
    // Every backend required, so /readyz says 503 while the backend hangs (the default would say 200).
    gw = await startGatewayFor([{ id: 'east', url: sim.url, maxConnections: 2, timeoutMs: 1_000, readRetries: 0 }], {
      readiness: { require: 'all', probeIntervalMs: 100 },
    });
  });
  afterAll(disposeAll);

  it('should give a timely BACKEND_TIMEOUT, /readyz and storageBackends { health } should answer, and the next call should work', async () => {
    // Control side: every request now waits ~11 days (the simulator's close ends the wait).
    sim.setLatency(1e9);
    // More stuck calls than the pool has connections.
    const stuck = await Promise.all([1, 2, 3, 4].map(() => gw.gql(LIST, undefined, admin)));
    for (const res of stuck) expect(res.body.errors?.[0]?.extensions?.code).toBe('BACKEND_TIMEOUT');
    await until(
      async () => (await fetch(gw.gateway.url.replace('/graphql', '/readyz'))).status === 503,
      '/readyz 503',
      30_000,
    );
    const health = await gw.gql('{ storageBackends { id health { status } } }', undefined, admin);
    expect(health.body.data.storageBackends[0].health.status).toBe('DOWN');
    sim.setLatency(0);
    // The calls above may have opened the breaker: the next call works once the background probe closed it.
    let next = await gw.gql(LIST, undefined, admin);
    await until(
      async () => (next = await gw.gql(LIST, undefined, admin)).body.errors === undefined,
      'a list without errors',
      30_000,
      200,
    );
    expect(next.body.data.volumes.nodes).toHaveLength(3);
    await until(
      async () => (await fetch(gw.gateway.url.replace('/graphql', '/readyz'))).status === 200,
      '/readyz 200 again',
      30_000,
    );
  });
});

describe('a client hanging up mid-query', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  const POOL = 8;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 40);
    gw = await startGatewayFor([{ id: 'east', url: sim.url, maxConnections: POOL }], { maxConcurrentReads: POOL });
  });
  afterAll(disposeAll);

  it("should not churn upstream connections: the simulator accepts at most a pool's worth for 10 abandoned list-with-attachments queries", async () => {
    const query = JSON.stringify({ query: '{ volumes(first: 40) { nodes { id attachments { id } } } }' });
    const post = (signal?: AbortSignal): Promise<Response> =>
      fetch(gw.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...admin },
        body: query,
        signal,
      });
    sim.setLatency(20);
    // Warm the pool with one complete query.
    expect((await (await post()).json()).errors).toBeUndefined();
    const before = sim.connectionsAccepted();
    sim.clearRequests();
    for (let i = 0; i < 10; i++) {
      const base = sim.requests().length;
      const client = new AbortController();
      const done = post(client.signal)
        .then((r) => r.text())
        .catch(() => undefined);
      // Hang up once the list and a few reads reached the simulator: mid-query.
      while (sim.requests().length < base + 2 + i) await sleep(2);
      client.abort();
      await done;
    }
    await sleep(300);
    sim.setLatency(0);
    const accepted = sim.connectionsAccepted() - before;
    const received = sim.requests().length;
    // Before issue 9: 12–72 new connections per abandoned query, most of them carrying nothing.
    expect(accepted).toBeLessThanOrEqual(POOL);
    // Reads not yet sent were dropped: far fewer than 10 queries × (1 list + 40 reads).
    expect(received).toBeLessThan(10 * 41);
    const after = await (await post()).json();
    expect(after.errors).toBeUndefined();
    expect(after.data.volumes.nodes).toHaveLength(40);
  });
});
