/**
 * A hung backend (docs/reliability.md R4, R5): simulators run as child processes and are stopped
 * with SIGSTOP, so they keep their sockets and answer nothing, as a hung host does. Once the
 * backend's breaker is open its calls fail at once; merged lists answer the other backend within
 * their per-backend deadline; the watcher reports DEGRADED; /readyz answers at once from held
 * state, 200 by default and 503 under READINESS_REQUIRE=all; SIGCONT lets the background probe
 * close the breaker. A hung Nova (the OpenStack simulator's own latency control) does not block
 * Cinder lists. A stop longer than the breaker's open time (R20): callers are refused at once
 * until the background probe closes the breaker, which it does within about a probe interval of
 * SIGCONT, and the watcher is back on the event stream soon after.
 */
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';
import { until } from '../support/until';
import {
  nomadBanner,
  openStackBanner,
  startSimulatorProcess,
  type SimulatorProcess,
} from '../../simulators/common/child';

jest.setTimeout(240_000);

const LIST = `{ volumes(first: 100) { nodes { backend { id } name } omittedBackends { backend { id } reason code message } } }`;
const READ_EAST = `{ volumeByNativeId(backend: "east", namespace: "default", nativeId: "no-such-volume") { id } }`;

async function readyz(gw: GatewayUnderTest): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await fetch(gw.gateway.url.replace(/\/graphql$/, '/readyz'), { signal: AbortSignal.timeout(60_000) });
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - started };
}

const backendOf = (body: any, id: string): any => body.backends.find((b: any) => b.id === id);
const breakerOf = (body: any, id: string, service: string): any =>
  backendOf(body, id).breakers.find((b: any) => b.service === service);

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe('a Nomad stopped with SIGSTOP', () => {
  let east: SimulatorProcess;
  let gw: GatewayUnderTest;
  let gwAll: GatewayUnderTest;
  let headers: Record<string, string>;
  /** The stopped backend's call deadline: what every call to it cost before the breaker. */
  const CALL_DEADLINE_MS = 8_000;

  beforeAll(async () => {
    east = await startSimulatorProcess('nomad');
    const { url, managementToken } = nomadBanner(east.banner);
    const west = await startNomad();
    seedVolumes(west, 3);
    const backends = [
      { id: 'east', url, token: managementToken, timeoutMs: CALL_DEADLINE_MS, readRetries: 0 },
      { id: 'west', url: west.url, token: MGMT, timeoutMs: CALL_DEADLINE_MS },
    ];
    gw = await startGatewayFor(backends, {
      resilience: { listBackendDeadlineMs: 1_000 },
      readiness: { probeIntervalMs: 500 },
    });
    gwAll = await startGatewayFor(backends, { readiness: { require: 'all', probeIntervalMs: 500 } });
    headers = { 'x-nomad-token-east': managementToken, 'x-nomad-token-west': MGMT };
    // (`watchers` is the live hub's list, as before the breakers came.)
    await until(
      async () =>
        (await readyz(gw)).body.watchers.find((w: any) => w.backend === 'east')?.watcher?.state === 'STREAMING',
      'the east watcher streaming',
      60_000,
    );
    await until(async () => (await readyz(gwAll)).status === 200, 'the READINESS_REQUIRE=all gateway ready', 60_000);
  });

  afterAll(async () => {
    await disposeAll();
    await east?.close();
  });

  it('should fail fast once the breaker opens, answer merged lists, report DEGRADED, keep /readyz fast and 200, and close again after SIGCONT', async () => {
    east.pause();

    // A merged list answers the other backend within its per-backend deadline (1 s here), not the 8 s call deadline.
    const merged = await timed(() => gw.gql(LIST, {}, headers));
    expect(merged.value.body.errors?.map((e: any) => e.extensions.code)).toEqual(['BACKEND_TIMEOUT']);
    // The failed backend's place is a null item with its error.
    expect(merged.value.body.data.volumes.nodes.map((v: any) => v?.backend.id ?? null)).toEqual([
      null,
      'west',
      'west',
      'west',
    ]);
    expect(merged.value.body.data.volumes.omittedBackends).toEqual([
      {
        backend: { id: 'east' },
        reason: 'FAILED',
        code: 'BACKEND_TIMEOUT',
        message: expect.stringMatching(/per-backend deadline/),
      },
    ]);
    expect(merged.ms).toBeLessThan(CALL_DEADLINE_MS / 2);

    // Five calls that wait the full deadline open the breaker (5 failures in a row).
    const slow = await Promise.all([1, 2, 3, 4, 5].map(() => gw.gql(READ_EAST, {}, headers)));
    for (const r of slow) expect(r.body.errors[0].extensions.code).toMatch(/BACKEND_TIMEOUT|BACKEND_UNAVAILABLE/);
    await until(
      async () => breakerOf((await readyz(gw)).body, 'east', 'nomad').state === 'OPEN',
      'the east breaker open',
      60_000,
    );

    // While open, a call fails at once, naming the backend, the service and when it is tried again.
    const fast = await timed(() => gw.gql(READ_EAST, {}, headers));
    const ext = fast.value.body.errors[0].extensions;
    expect(ext).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      retryable: true,
      backend: 'east',
      service: 'nomad',
      breaker: 'OPEN',
    });
    expect(ext.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(fast.value.body.errors[0].message).toMatch(
      /backend "east" \(nomad\) .*circuit breaker is open.*tried again in \d+ s/,
    );
    expect(fast.ms).toBeLessThan(CALL_DEADLINE_MS / 2);
    const mergedOpen = await gw.gql(LIST, {}, headers);
    expect(mergedOpen.body.data.volumes.omittedBackends).toEqual([
      {
        backend: { id: 'east' },
        reason: 'FAILED',
        code: 'BACKEND_UNAVAILABLE',
        message: expect.stringMatching(/circuit breaker is open/),
      },
    ]);
    expect(mergedOpen.body.data.volumes.nodes.filter(Boolean)).toHaveLength(3);

    // The watcher says so (the breaker opened before the heartbeat allowance ran out).
    await until(
      async () => backendOf((await readyz(gw)).body, 'east').watcher?.state === 'DEGRADED',
      'the east watcher DEGRADED',
      60_000,
    );

    // /readyz answers from held state: at once, 200 by default, the backend's state in the body.
    const ready = await readyz(gw);
    expect(ready.status).toBe(200);
    expect(ready.ms).toBeLessThan(CALL_DEADLINE_MS / 2);
    expect(ready.body).toMatchObject({ ready: true, require: 'none' });
    expect(backendOf(ready.body, 'east')).toMatchObject({
      available: false,
      breakers: [{ service: 'nomad', state: 'OPEN' }],
      watcher: { state: 'DEGRADED' },
    });
    expect(backendOf(ready.body, 'west')).toMatchObject({
      status: 'UP',
      available: true,
      breakers: [{ service: 'nomad', state: 'CLOSED' }],
    });
    // …and 503 where the operator requires every backend.
    await until(async () => (await readyz(gwAll)).status === 503, '503 under READINESS_REQUIRE=all', 60_000);
    const all = await readyz(gwAll);
    expect(all.ms).toBeLessThan(CALL_DEADLINE_MS / 2);
    expect(all.body).toMatchObject({ ready: false, require: 'all' });

    // /metrics shows the gauge per backend and service.
    const metrics = await (await fetch(gw.gateway.url.replace(/\/graphql$/, '/metrics'))).text();
    expect(metrics).toMatch(/gateway_backend_breaker_state\{backend="east",service="nomad"\} 2/);
    expect(metrics).toMatch(/gateway_backend_breaker_state\{backend="west",service="nomad"\} 0/);

    east.resume();
    // The background probe closes it (never a caller's call); the watcher streams again.
    await until(
      async () => {
        const b = backendOf((await readyz(gw)).body, 'east');
        return b.breakers[0].state === 'CLOSED' && b.watcher?.state === 'STREAMING';
      },
      'the east breaker closed and its watcher streaming',
      120_000,
      200,
    );
    const after = await gw.gql(LIST, {}, headers);
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data.volumes.omittedBackends).toEqual([]);
    await until(async () => (await readyz(gwAll)).status === 200, 'READINESS_REQUIRE=all ready again', 120_000);
  });
});

describe('a Nomad stopped longer than the breaker stays open (R20)', () => {
  let sim: SimulatorProcess;
  let gw: GatewayUnderTest;
  let headers: Record<string, string>;
  const CALL_DEADLINE_MS = 2_000;
  const OPEN_MS = 1_000;
  const PROBE_INTERVAL_MS = 250;

  beforeAll(async () => {
    // Heartbeats every 200 ms, so a 1 s allowance finds the stopped stream dead (as 45 s does in production).
    sim = await startSimulatorProcess('nomad', { NOMAD_SIM_EVENT_HEARTBEAT_MS: '200' });
    const { url, managementToken } = nomadBanner(sim.banner);
    gw = await startGatewayFor(
      [{ id: 'east', url, token: managementToken, timeoutMs: CALL_DEADLINE_MS, readRetries: 0 }],
      {
        resilience: {
          breaker: {
            failures: 5,
            failureRatePercent: 50,
            minCalls: 10,
            windowMs: 30_000,
            openMs: OPEN_MS,
            maxOpenMs: 60_000,
          },
        },
        readiness: { probeIntervalMs: PROBE_INTERVAL_MS, probeTimeoutMs: 1_000 },
        // The stream's retry from blocking queries stays at its default (5 minutes).
        nomadWatch: { heartbeatTimeoutMs: 1_000, backoffMs: 100, maxBackoffMs: 400 },
      },
    );
    headers = { 'x-nomad-token': managementToken };
    await until(
      async () => backendOf((await readyz(gw)).body, 'east').watcher?.state === 'STREAMING',
      'the watcher streaming',
      60_000,
    );
  });

  afterAll(async () => {
    await disposeAll();
    await sim?.close();
  });

  it('should refuse callers at once until the probe closes the breaker within about a probe interval of SIGCONT, and stream again soon after', async () => {
    sim.pause();
    const stoppedAt = Date.now();
    // Five calls in flight wait the deadline and open the breaker.
    await Promise.all([1, 2, 3, 4, 5].map(() => gw.gql(READ_EAST, {}, headers)));
    await until(
      async () => backendOf((await readyz(gw)).body, 'east').breakers[0].state !== 'CLOSED',
      'the breaker open',
      60_000,
      50,
    );

    // One caller all along, from now until the breaker closes; /readyz is watched as often.
    let state = 'OPEN';
    let closedAt = 0;
    let resumedAt = 0;
    const whileNotClosed: Array<{ ms: number; code: string }> = [];
    const watching = (async () => {
      while (closedAt === 0) {
        state = backendOf((await readyz(gw)).body, 'east').breakers[0].state;
        if (state === 'CLOSED' && resumedAt > 0) closedAt = Date.now();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const asking = (async () => {
      while (closedAt === 0) {
        const open = state !== 'CLOSED';
        const { value, ms } = await timed(() => gw.gql(READ_EAST, {}, headers));
        if (open && closedAt === 0)
          whileNotClosed.push({ ms, code: value.body.errors?.[0]?.extensions.code ?? 'data' });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    // Stopped well past the open time: several probes fail meanwhile.
    await new Promise((r) => setTimeout(r, Math.max(0, 8_000 - (Date.now() - stoppedAt))));
    sim.resume();
    resumedAt = Date.now();
    await Promise.all([watching, asking]);

    // (a) No caller waited for the deadline: each was refused at once (the probe alone tests the
    // backend), or answered when the breaker had just closed.
    expect(whileNotClosed.length).toBeGreaterThan(10);
    expect(whileNotClosed.filter((c) => c.code !== 'BACKEND_UNAVAILABLE' && c.code !== 'data')).toEqual([]);
    expect(Math.max(...whileNotClosed.map((c) => c.ms))).toBeLessThan(CALL_DEADLINE_MS / 2);
    // (b) Closed within about a probe interval of SIGCONT (250 ms here; bound generous for a loaded machine).
    expect(closedAt - resumedAt).toBeLessThan(3_000);
    // (c) The watcher is back on the event stream soon after (not after its 5-minute retry).
    let watcher: any;
    await until(
      async () => {
        watcher = backendOf((await readyz(gw)).body, 'east').watcher;
        return watcher?.state === 'STREAMING' && watcher.source === 'EVENT_STREAM';
      },
      () => `the watcher on the event stream; ${JSON.stringify(watcher)}`,
      10_000,
      50,
    );
    const after = await gw.gql(READ_EAST, {}, headers);
    expect(after.body).toEqual({ data: { volumeByNativeId: null } });
  });
});

describe('an OpenStack whose Nova hangs', () => {
  let os: SimulatorProcess;
  let gw: GatewayUnderTest;
  let control: string;
  let token: string;
  const CALL_DEADLINE_MS = 6_000;

  beforeAll(async () => {
    os = await startSimulatorProcess('openstack');
    const { keystoneUrl } = openStackBanner(os.banner);
    control = keystoneUrl.replace(/\/v3$/, '/_sim');
    const issued = await fetch(`${control}/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'demo', project: 'demo' }),
    });
    token = ((await issued.json()) as { token: string }).token;
    gw = await startGatewayFor(
      [
        {
          id: 'os',
          kind: 'openstack',
          url: keystoneUrl,
          region: 'RegionOne',
          interface: 'public',
          operationTimeoutMs: 10_000,
          timeoutMs: CALL_DEADLINE_MS,
          maxConnections: 16,
          readRetries: 0,
          auth: { method: 'password', username: 'demo', password: 'demo-secret', projectName: 'demo' },
        },
      ],
      { readiness: { probeIntervalMs: 500 } },
    );
  });

  afterAll(async () => {
    await disposeAll();
    await os?.close();
  });

  it('should keep Cinder lists answering while Nova calls hang, and open only the Nova breaker', async () => {
    const auth = { 'x-auth-token': token };
    const before = await gw.gql(LIST, {}, auth);
    expect(before.body.errors).toBeUndefined();
    const count = before.body.data.volumes.nodes.length;
    expect(count).toBeGreaterThan(0);

    // Nova alone answers nothing for ~11 days (the simulator's own control, never delayed itself).
    await fetch(`${control}/latency`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ms: 1e9, service: 'nova' }),
    });
    const SERVER = `{ serverVolumeAttachments(serverId: "a0000000-0000-4000-8000-000000000002") { id } }`;
    // Nova reads in flight, holding connections, while Cinder lists are asked for.
    const hung = Promise.all([1, 2, 3, 4, 5].map(() => gw.gql(SERVER, {}, auth)));
    await new Promise((r) => setTimeout(r, 200));
    const list = await timed(() => gw.gql(LIST, {}, auth));
    expect(list.value.body.errors).toBeUndefined();
    expect(list.value.body.data.volumes.nodes).toHaveLength(count);
    expect(list.ms).toBeLessThan(CALL_DEADLINE_MS / 2);
    for (const r of await hung) expect(r.body.errors[0].extensions.code).toMatch(/BACKEND_TIMEOUT|BACKEND_UNAVAILABLE/);

    await until(
      async () => breakerOf((await readyz(gw)).body, 'os', 'nova').state === 'OPEN',
      'the Nova breaker open',
      60_000,
    );
    const ready = await readyz(gw);
    expect(ready.status).toBe(200);
    expect(breakerOf(ready.body, 'os', 'cinder').state).toBe('CLOSED');
    expect(breakerOf(ready.body, 'os', 'keystone').state).toBe('CLOSED');
    // Nova fails fast now, naming the service; Cinder lists still answer.
    const fast = await timed(() => gw.gql(SERVER, {}, auth));
    expect(fast.value.body.errors[0].extensions).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      backend: 'os',
      service: 'nova',
      breaker: 'OPEN',
    });
    expect(fast.ms).toBeLessThan(CALL_DEADLINE_MS / 2);
    const again = await gw.gql(LIST, {}, auth);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.volumes.nodes).toHaveLength(count);

    await fetch(`${control}/latency`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ms: 0, service: 'nova' }),
    });
  });
});
