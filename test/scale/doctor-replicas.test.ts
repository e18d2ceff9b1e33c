/**
 * The volume doctor across replicas (issue 32): two gateway replicas on one real redis-server and a
 * Nomad simulator. The lease holder of the backend runs the checks and keeps the open problems in
 * Redis under its lease's fence; the other replica answers `volumeProblems` from there; a
 * `volumeProblemChanged` subscription on either gets the changes through the shared log. When the
 * holder is killed, the new holder starts from the kept problems: the problem keeps its id and
 * `seenAt`, and no second OPENED is sent; when its condition ends, RESOLVED comes once.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT } from '../support/constants';
import { disposeAll, startNomad } from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { startSharedRedis, type SharedRedisUnderTest } from '../support/redis-topology';
import { until } from '../support/until';
import { seedVolume } from '../adapters/nomad-helpers';
import { gql, nomadBackend, role, SERVICE_TOKEN, startReplica, type Replica } from './support';

const wait = (check: () => boolean | Promise<boolean>, what: string, ms = 45_000): Promise<void> =>
  until(check, what, ms);

const PROBLEMS = `{ volumeProblems { nodes { id kind seenAt volumeId } omittedBackends { reason message } } }`;
const SUB = `subscription { volumeProblemChanged { type cursor problem { id kind } } }`;

interface ProblemEvent {
  type: string;
  cursor: string;
  problem: { id: string; kind: string } | null;
}

function problemSubscription(r: Replica): { events: ProblemEvent[]; errors: unknown[]; dispose: () => Promise<void> } {
  const client: Client = createClient({
    url: r.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { 'X-Nomad-Token': MGMT },
    retryAttempts: 0,
  });
  const s = {
    events: [] as ProblemEvent[],
    errors: [] as unknown[],
    dispose: async () => void (await client.dispose()),
  };
  client.subscribe<{ volumeProblemChanged: ProblemEvent }>(
    { query: SUB },
    {
      next: (v) => {
        if (v.errors) s.errors.push(v.errors);
        if (v.data) s.events.push(v.data.volumeProblemChanged);
      },
      error: (e) => void s.errors.push(e),
      complete: () => undefined,
    },
  );
  return s;
}

async function problems(
  r: Replica,
): Promise<{ nodes: Array<{ id: string; kind: string; seenAt: string }>; omittedBackends: unknown[] }> {
  const res = await gql(r, PROBLEMS);
  return (res as { data: { volumeProblems: never } }).data.volumeProblems;
}

describe('the volume doctor across replicas', () => {
  let redis: SharedRedisUnderTest;
  let sim: NomadSimulator;
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    redis = await startSharedRedis();
    sim = await startNomad();
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    const backends = {
      ...nomadBackend(sim.url),
      DOCTOR_INTERVAL_MS: '1000',
      GATEWAY_BACKEND_EAST_DIAGNOSIS_STUCK_CLAIM_MS: '0',
    };
    [a, b] = await Promise.all([startReplica('a', redis.env, backends), startReplica('b', redis.env, backends)]);
  }, 90_000);
  afterAll(async () => {
    for (const r of [a, b]) r?.child.kill('SIGKILL');
    await disposeAll();
    await stopRedisServers();
  });

  it('should serve the holder’s problems on both replicas, keep them through a kill -9 of the holder without opening them again, and resolve them once', async () => {
    let holder: Replica | undefined;
    await wait(async () => {
      const [ra, rb] = await Promise.all([role(a), role(b)]);
      holder = ra === 'HOLDER' ? a : rb === 'HOLDER' ? b : undefined;
      return holder !== undefined;
    }, 'a lease holder');
    const follower = holder === a ? b : a;
    seedVolume(sim, 'db');
    const alloc = sim.placeAllocation({
      jobId: 'job-db',
      nodeId: 'node-1111',
      volumes: [{ volumeId: 'db', mode: 'write' }],
    });
    const watching = problemSubscription(follower);
    await wait(() => watching.events.some((e) => e.type === 'SUBSCRIBED'), 'SUBSCRIBED on the follower');
    sim.failAllocation(alloc, { holdClaims: true });

    // Opened by the holder, seen on both replicas and once on the follower's subscription.
    let opened: { id: string; seenAt: string } | undefined;
    await wait(async () => {
      opened = (await problems(holder!)).nodes.find((p) => p.kind === 'STUCK_CLAIM');
      return opened !== undefined;
    }, 'the stuck claim on the holder');
    await wait(
      async () => (await problems(follower)).nodes.some((p) => p.id === opened!.id && p.seenAt === opened!.seenAt),
      'the stuck claim on the follower (from Redis)',
    );
    await wait(() => watching.events.some((e) => e.type === 'OPENED' && e.problem?.id === opened!.id), 'OPENED');

    holder!.child.kill('SIGKILL');
    await wait(async () => (await role(follower)) === 'HOLDER', 'the follower to take over');
    // The new holder's passes (one a second) find the same claim: same id, same seenAt, no second OPENED.
    await wait(async () => {
      const now = await problems(follower);
      return now.omittedBackends.length === 0 && now.nodes.some((p) => p.id === opened!.id);
    }, 'the new holder to diagnose the backend');
    await new Promise((r) => setTimeout(r, 3_000));
    const after = (await problems(follower)).nodes.find((p) => p.id === opened!.id);
    expect(after?.seenAt).toBe(opened!.seenAt);
    expect(watching.events.filter((e) => e.type === 'OPENED').map((e) => e.problem?.id)).toEqual([opened!.id]);

    // Nomad's claim GC frees the claim: resolved once.
    sim.runClaimGC();
    await wait(() => watching.events.some((e) => e.type === 'RESOLVED'), 'RESOLVED');
    expect(watching.events.filter((e) => e.type !== 'SUBSCRIBED').map((e) => [e.type, e.problem?.id])).toEqual([
      ['OPENED', opened!.id],
      ['RESOLVED', opened!.id],
    ]);
    expect(watching.errors).toEqual([]);
    expect((await problems(follower)).nodes).toEqual([]);
    await watching.dispose();
    // Back to two replicas is not needed: this file has one test.
  }, 150_000);
});
