/**
 * The OpenStack backend's availability: the gateway's own Keystone credential serves /readyz only
 * (never callers), and Cinder outages are retried or reported per backend, beside Nomad's data.
 * The gateway talks HTTP to the OpenStack simulator; assertions read its request log.
 */
import { until } from '../support/until';
import {
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  OS,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

const VOLUME = `query($id: ID!) { volume(id: $id) { id name status } }`;
const LIST = `query($f: VolumeFilter) { volumes(first: 50, filter: $f) { nodes { id backend { id } name status } omittedBackends { backend { id } reason code message } } }`;

type Logged = {
  service: string;
  method: string;
  path: string;
  action?: string;
  status: number;
  microversion: string | null;
};
const log = (os: OpenStackUnderTest): Logged[] => os.sim.requests();

/** Global id of a Cinder volume, read through the gateway. */
async function gidOf(
  gw: GatewayUnderTest,
  os: OpenStackUnderTest,
  nativeId: string,
  auth: Record<string, string>,
): Promise<string> {
  const res = await gw.gql(
    `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
    { n: nativeId, p: os.demo },
    auth,
  );
  const id = res.body.data?.volumeByNativeId?.id;
  if (!id) throw new Error(`volume ${nativeId} not readable: ${JSON.stringify(res.body)}`);
  return id;
}

/** GET /readyz of the gateway. */
async function readyz(gw: GatewayUnderTest): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL('/readyz', gw.gateway.url));
  return { status: res.status, body: await res.json() };
}

/** /readyz once `check` holds for it: the background probe feeds what it reports. */
async function readyzWhen(
  gw: GatewayUnderTest,
  check: (r: { status: number; body: any }) => boolean,
  what: string,
): Promise<{ status: number; body: any }> {
  let last: { status: number; body: any } | undefined;
  await until(async () => check((last = await readyz(gw))), what, 30_000);
  return last!;
}

/** Probes every 100 ms; every backend required, so a DOWN backend makes /readyz 503. */
const PROBED = { readiness: { require: 'all' as const, probeIntervalMs: 100 } };
const up = (r: { status: number; body: any }): boolean => r.status === 200 && r.body.backends[0]?.status === 'UP';
const down = (r: { status: number; body: any }): boolean => r.status === 503 && r.body.backends[0]?.status === 'DOWN';

describe("the gateway's own Keystone credential", () => {
  afterEach(disposeAll);

  const tokenPosts = (os: OpenStackUnderTest): Logged[] =>
    log(os).filter((r) => r.service === 'keystone' && r.method === 'POST' && r.path === '/v3/auth/tokens');

  it('should report UP with a password credential and reuse one token over several probes', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.demoUser, password: OS.demoPassword, projectName: 'demo' },
        }),
      ],
      PROBED,
    );
    expect(await readyzWhen(gw, up, 'UP')).toMatchObject({
      body: { ready: true, backends: [{ id: 'os', kind: 'OPENSTACK', status: 'UP' }] },
    });
    os.sim.clearRequests();
    // Several more background probes, one token.
    await until(
      () => log(os).filter((r) => r.service === 'cinder' && r.status === 200).length >= 3,
      'three more probes',
      30_000,
    );
    expect(tokenPosts(os)).toEqual([]);
    // The probe reached Cinder and Nova with the service token (their version documents).
    expect(log(os).some((r) => r.service === 'nova' && r.status === 200)).toBe(true);
  });

  it('should authenticate again before the service token expires (5 minutes ahead)', async () => {
    // Tokens that live 4 minutes are always inside the refresh margin: every probe gets a new one.
    const os = await startOpenStack({ tokenTtlMs: 4 * 60_000 });
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.demoUser, password: OS.demoPassword, projectName: 'demo' },
        }),
      ],
      PROBED,
    );
    await readyzWhen(gw, up, 'UP');
    await until(() => tokenPosts(os).length >= 3, 'a new token per probe', 30_000);
    expect(tokenPosts(os).every((r) => r.status === 201)).toBe(true);
  });

  it('should report UP with an application credential', async () => {
    const os = await startOpenStack();
    const acId = os.sim.addApplicationCredential({
      user: OS.demoUser,
      project: 'demo',
      name: 'gateway',
      secret: 'gateway-ac-secret',
    });
    const gw = await startGatewayFor(
      [os.backend('os', { auth: { method: 'applicationCredential', id: acId, secret: 'gateway-ac-secret' } })],
      PROBED,
    );
    await readyzWhen(gw, up, 'UP');
    await until(
      () => log(os).filter((r) => r.service === 'cinder' && r.status === 200).length >= 2,
      'two probes',
      30_000,
    );
    expect(tokenPosts(os)).toEqual([expect.objectContaining({ status: 201 })]);
  });

  it('should report DOWN with a clear message for a wrong password, and keep serving', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.demoUser, password: 'wrong-password', projectName: 'demo' },
        }),
      ],
      PROBED,
    );
    const r = await readyzWhen(gw, down, 'DOWN');
    expect(r.body.ready).toBe(false);
    expect(r.body.backends).toEqual([
      expect.objectContaining({
        id: 'os',
        status: 'DOWN',
        message: expect.stringMatching(/own credential for backend "os" was refused by Keystone/),
      }),
    ]);
    // A 401 is not an outage: Keystone's breaker stays closed however often the probe is refused.
    await until(() => tokenPosts(os).length >= 6, 'six refused probes', 30_000);
    expect(tokenPosts(os).every((p) => p.status === 401)).toBe(true);
    expect((await readyz(gw)).body.backends[0].breakers).toEqual(
      expect.arrayContaining([expect.objectContaining({ service: 'keystone', state: 'CLOSED' })]),
    );
    const health = await fetch(new URL('/healthz', gw.gateway.url));
    expect(health.status).toBe(200);
    // Callers with their own token are unaffected.
    const list = await gw.gql(LIST, {}, { 'x-auth-token': os.demoToken });
    expect(list.body.errors).toBeUndefined();
  });

  it('should report the backend DOWN but the gateway ready by default (READINESS_REQUIRE=none)', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.demoUser, password: 'wrong-password', projectName: 'demo' },
        }),
      ],
      { readiness: { probeIntervalMs: 100 } },
    );
    const r = await readyzWhen(gw, (x) => x.body.backends[0]?.status === 'DOWN', 'DOWN');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ready: true,
      require: 'none',
      backends: [{ id: 'os', status: 'DOWN', available: false }],
    });
  });

  it('should probe Cinder in the background: DOWN naming Cinder during an outage, UP again after', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.demoUser, password: OS.demoPassword, projectName: 'demo' },
        }),
      ],
      PROBED,
    );
    await readyzWhen(gw, up, 'UP');
    os.sim.unavailable({ service: 'cinder' });
    const d = await readyzWhen(gw, down, 'DOWN');
    expect(d.body.backends).toEqual([
      expect.objectContaining({
        id: 'os',
        status: 'DOWN',
        message: expect.stringMatching(
          /Cinder is unavailable .*backend "os"|cinder\) is unavailable: its circuit breaker is open/,
        ),
      }),
    ]);
    os.sim.available('cinder');
    // The breaker (opened by the 503s) lets the background probe through after its open time, which closes it.
    await readyzWhen(gw, up, 'UP again');
    expect(tokenPosts(os)).toHaveLength(1);
  });

  it('should drop a revoked service token after the 401 and authenticate again on the next probe', async () => {
    // keystonemiddleware's validation cache off, so Cinder notices the revocation at once.
    const os = await startOpenStack({ tokenCacheMs: 0 });
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        }),
      ],
      PROBED,
    );
    await readyzWhen(gw, up, 'UP');
    expect(os.sim.revokeUserTokens(OS.adminUser)).toBeGreaterThan(0);
    await until(() => tokenPosts(os).length >= 2, 'a second token after the revocation', 30_000);
    await readyzWhen(gw, up, 'UP after the revocation');
    expect(tokenPosts(os).map((r) => r.status)).toEqual([201, 201]);
  });

  it('should never use the service token for callers: without X-Auth-Token the list leaves the backend out as NO_CREDENTIAL and a read answers UNAUTHENTICATED', async () => {
    const os = await startOpenStack();
    const vid = os.sim.seedVolume({ project: os.demo, name: 'private', size: 1 });
    const gw = await startGatewayFor(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        }),
      ],
      { readiness: { probeIntervalMs: 60_000 } },
    );
    await readyzWhen(gw, up, 'UP'); // the service token exists and works
    os.sim.clearRequests();
    const res = await gw.gql(LIST, {}, {});
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toEqual([]);
    expect(res.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'NO_CREDENTIAL', code: null, message: expect.stringMatching(/X-Auth-Token/) },
    ]);
    // A read that needs the backend is an error naming it, still without the service token.
    const byNative = await gw.gql(
      `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
      { n: vid, p: os.demo },
      {},
    );
    expect(byNative.body.data.volumeByNativeId).toBeNull();
    expect(byNative.body.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', backend: 'os' }) }),
    ]);
    expect(byNative.body.errors[0].message).toMatch(/X-Auth-Token/);
    // Nothing reached Cinder or Nova on the caller's behalf.
    expect(log(os).filter((r) => r.service !== 'keystone')).toEqual([]);
  });
});

describe('Cinder outages', () => {
  afterEach(disposeAll);

  it('should retry a read through a one-request outage', async () => {
    const os = await startOpenStack();
    os.sim.seedVolume({ project: os.demo, name: 'survivor', size: 1 });
    const gw = await startGatewayFor([os.backend('os')]);
    const auth = { 'x-auth-token': os.demoToken };
    expect((await gw.gql(LIST, {}, auth)).body.errors).toBeUndefined(); // warm: token and version documents
    os.sim.clearRequests();
    os.sim.unavailable({ service: 'cinder', count: 1 });
    const res = await gw.gql(LIST, {}, auth);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['survivor']);
    expect(
      log(os)
        .filter((r) => r.service === 'cinder')
        .map((r) => `${r.method} ${r.path.replace(/\/v3\/[0-9a-f]{32}/, '/v3/:p')} ${r.status}`),
    ).toEqual(['GET /v3/:p/volumes/detail 503', 'GET /v3/:p/volumes/detail 200']);
  });

  it('should answer BACKEND_UNAVAILABLE naming the backend during a longer outage, with the Nomad data still there', async () => {
    const os = await startOpenStack();
    const vid = os.sim.seedVolume({ project: os.demo, name: 'cinder-1', size: 1 });
    const nomad = await startNomad({ acl: { enabled: false } });
    seedVolumes(nomad, 2);
    const gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os', { readRetries: 2 })]);
    const auth = { 'x-auth-token': os.demoToken };
    const id = await gidOf(gw, os, vid, auth);
    os.sim.unavailable({ service: 'cinder' });
    os.sim.clearRequests();
    const res = await gw.gql(
      `{ volumes { nodes { backend { id } name } omittedBackends { backend { id } reason code } } }`,
      {},
      auth,
    );
    // The failed backend's volumes would come after Nomad's: a null item there, the error at its path.
    expect(res.body.data.volumes.nodes.map((v: any) => (v ? `${v.backend.id}:${v.name}` : null))).toEqual([
      'east:vol 0',
      'east:vol 1',
      null,
    ]);
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        path: ['volumes', 'nodes', 2],
        extensions: expect.objectContaining({ code: 'BACKEND_UNAVAILABLE', backend: 'os' }),
      }),
    ]);
    expect(res.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'FAILED', code: 'BACKEND_UNAVAILABLE' },
    ]);
    expect(res.body.errors[0].message).toMatch(/backend "os"/);
    // One attempt and two retries, then the gateway gave up.
    expect(
      log(os)
        .filter((r) => r.service === 'cinder')
        .map((r) => r.status),
    ).toEqual([503, 503, 503]);
    const one = await gw.gql(VOLUME, { id }, auth);
    expect(one.body.data.volume).toBeNull();
    expect(one.body.errors[0].extensions).toMatchObject({ code: 'BACKEND_UNAVAILABLE', backend: 'os' });
    os.sim.available('cinder');
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({ name: 'cinder-1' });
  });
});
