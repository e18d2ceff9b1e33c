/**
 * Scale-out chaos (issue 29): two gateway replicas (child processes) on one real redis-server (or,
 * with `VG_TEST_REDIS=cluster` as `npm run test:redis-ha` sets, a real Redis Cluster), one
 * Nomad simulator. One replica holds the watcher lease and appends to the shared log; both fan out
 * from it. Asserted by sequence (the events each subscriber received, their cursors and order),
 * never by a sleep: kill -9 of the holder, a holder paused past its lease (fencing), a client that
 * resumes with its cursor on the other replica, and Redis restarted empty (on a Cluster: the primary
 * serving the gateway's slot, which rejoins empty).
 */
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { startSharedRedis, type SharedRedisUnderTest } from '../support/redis-topology';
import { until } from '../support/until';

/** `until` with a bound for a loaded machine: processes here wait out leases and hand-overs. */
const wait = (check: () => boolean | Promise<boolean>, what: string | (() => string), ms = 45_000): Promise<void> =>
  until(check, what, ms);
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT } from '../support/constants';
import {
  created,
  gql,
  nativeOf,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from './support';

describe('replicas on one Redis (live path)', () => {
  let redis: SharedRedisUnderTest;
  let sim: NomadSimulator;
  let a: Replica;
  let b: Replica;
  const subs: Subscriber[] = [];
  let n = 0;
  /** Adds a volume to Nomad: one CREATED event. */
  const create = (): string => seedVolumes(sim, 1, 'default', `x${++n}`)[0]!;

  beforeAll(async () => {
    redis = await startSharedRedis();
    sim = await startNomad();
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 2);
    [a, b] = await Promise.all([
      startReplica('a', redis.env, nomadBackend(sim.url)),
      startReplica('b', redis.env, nomadBackend(sim.url)),
    ]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.dispose()));
    for (const r of [a, b]) r?.child.kill('SIGKILL');
    await disposeAll();
    await stopRedisServers();
  });

  const holderAndFollower = async (): Promise<[Replica, Replica]> => {
    let roles: Array<string | null> = [];
    await wait(
      async () => {
        roles = await Promise.all([role(a), role(b)]);
        return roles.includes('HOLDER') && roles.includes('FOLLOWER');
      },
      () => `one holder and one follower (roles ${JSON.stringify(roles)})`,
      30_000,
    );
    return roles[0] === 'HOLDER' ? [a, b] : [b, a];
  };

  it('should have exactly one replica watch the backend, and deliver its changes once each, in order, on both', async () => {
    const [holder, follower] = await holderAndFollower();
    const onHolder = await subscribe(holder);
    const onFollower = await subscribe(follower);
    subs.push(onHolder, onFollower);
    const made = [create(), create(), create()];
    await wait(() => created(onHolder).length >= 3 && created(onFollower).length >= 3, 'three CREATED on both');
    expect(created(onHolder)).toEqual(made);
    expect(created(onFollower)).toEqual(made);
    // One log: the same cursors on both replicas.
    expect(onFollower.changes().map((e) => e.cursor)).toEqual(onHolder.changes().map((e) => e.cursor));
    expect(await Promise.all([role(a), role(b)])).toEqual(expect.arrayContaining(['HOLDER', 'FOLLOWER']));
  });

  it('should answer a list with attachments on the follower from its view, as the holder does: one proof read, not one per volume', async () => {
    const [holder, follower] = await holderAndFollower();
    sim.placeAllocation({
      jobId: 'app',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    const LIST = '{ volumes(first: 100) { nodes { id status backendStatus updatedAt attachments { id state } } } }';
    const view = async (r: Replica): Promise<string> => JSON.stringify((await gql(r, LIST)).data);
    // Both views caught up with the claim (the follower's through the shared log).
    await wait(
      async () => {
        const [h, f] = await Promise.all([view(holder), view(follower)]);
        return (
          h === f && h.includes('ATTACHED') && (await readyz(follower)).replication.backends[0].viewComplete === true
        );
      },
      'the follower to answer as the holder does',
      30_000,
    );
    const reads = (): number =>
      sim
        .requests()
        .filter((r: any) => r.headers['x-nomad-token'] === MGMT && /^\/v1\/volume\/csi\/[^/]+$/.test(r.path)).length;
    const before = reads();
    const answer = await gql(follower, LIST);
    expect(answer.errors).toBeUndefined();
    expect(answer.data.volumes.nodes.length).toBeGreaterThanOrEqual(5);
    // One read of the caller's proves its access to the namespace; the view answers the rest.
    expect(reads() - before).toBeLessThanOrEqual(1);
  });

  it('should hand the watcher over when the holder is killed -9, and a client resuming on the other replica with its cursor gets every event once', async () => {
    const [holder, follower] = await holderAndFollower();
    const watching = await subscribe(follower);
    const resuming = await subscribe(holder);
    subs.push(watching, resuming);
    const before = [create(), create()];
    await wait(() => created(resuming).length >= 2 && created(watching).length >= 2, 'the first two on both');
    const last = resuming.changes().at(-1)!.cursor;
    holder.child.kill('SIGKILL');
    const killedAt = Date.now();
    // Changes while no replica watches: the new holder's first read finds them.
    const during = [create(), create()];
    await wait(() => created(watching).length >= 4, 'the changes made during the hand-over', 30_000);
    const failoverMs = Date.now() - killedAt;
    const after = [create()];
    await wait(() => created(watching).length >= 5, 'a change after the hand-over');
    expect(created(watching).slice(0, 2)).toEqual(before);
    expect(created(watching).slice(2, 4).sort()).toEqual([...during].sort());
    expect(created(watching).slice(4)).toEqual(after);
    const resumed = await subscribe(follower, last);
    subs.push(resumed);
    await wait(() => created(resumed).length >= 3, 'the replay on the other replica');
    expect(resumed.errors).toEqual([]);
    expect(created(resumed)).toEqual(created(watching).slice(2));
    expect(await role(follower)).toBe('HOLDER');
    console.log(
      `failover: kill -9 of the holder → next event delivered on the other replica in ${failoverMs} ms (lease TTL 1500 ms)`,
    );
    // Back to two replicas for what follows.
    const again = await startReplica(holder.name, redis.env, nomadBackend(sim.url));
    if (holder === a) a = again;
    else b = again;
  }, 90_000);

  it('should fence a holder paused past its lease: after SIGCONT it writes nothing, and no event is doubled', async () => {
    const [holder, follower] = await holderAndFollower();
    const watching = await subscribe(follower);
    subs.push(watching);
    holder.child.kill('SIGSTOP');
    try {
      await wait(async () => (await role(follower)) === 'HOLDER', 'the other replica to take over', 30_000);
      const made = [create(), create()];
      await wait(() => created(watching).length >= 2, 'the changes after the take-over');
      holder.child.kill('SIGCONT');
      await wait(
        async () => (await role(holder)) === 'FOLLOWER',
        'the paused replica to find it lost its lease',
        30_000,
      );
      made.push(create());
      await wait(() => created(watching).length >= 3, 'a change after SIGCONT');
      // Each once; the two made while the new holder took over come in the order its first read
      // lists them (a take-over compares a whole read with the view), then the one after.
      expect(created(watching).slice(0, 2).sort()).toEqual(made.slice(0, 2).sort());
      expect(created(watching).slice(2)).toEqual(made.slice(2));
      // The log itself holds each once: the paused holder's late appends were refused.
      const r = redis.connect();
      try {
        const entries = (await r.xrange('scale:{live}:events', '-', '+')) as Array<[string, string[]]>;
        const ids = entries
          .map(
            ([, fields]) =>
              JSON.parse(fields[fields.indexOf('e') + 1] ?? fields[1]!) as { type: string; volumeId: string },
          )
          .filter((e) => e.type === 'CREATED' && made.includes(nativeOf(e.volumeId)))
          .map((e) => nativeOf(e.volumeId));
        // Same order rule as the delivery above: the log is what was delivered.
        expect(ids.slice(0, 2).sort()).toEqual(made.slice(0, 2).sort());
        expect(ids.slice(2)).toEqual(made.slice(2));
      } finally {
        r.disconnect();
      }
    } finally {
      holder.child.kill('SIGCONT');
    }
  }, 90_000);

  it('should end live subscriptions with CURSOR_EXPIRED when Redis restarts empty, refuse old cursors, and carry on without a gateway restart', async () => {
    const [, follower] = await holderAndFollower();
    const live = await subscribe(follower);
    subs.push(live);
    create();
    await wait(() => created(live).length >= 1, 'a change before the restart');
    const old = live.changes().at(-1)!.cursor;
    await redis.restart();
    await wait(() => live.errors.length > 0 || live.completed, 'the live subscription to end');
    expect(JSON.stringify(live.errors)).toContain('CURSOR_EXPIRED');
    await wait(
      async () => {
        const s = await subscribe(follower, old).catch(() => null);
        if (!s) return false;
        subs.push(s);
        return JSON.stringify(s.errors).includes('CURSOR_EXPIRED');
      },
      'an old cursor to be refused with CURSOR_EXPIRED',
      30_000,
    );
    const fresh = await subscribe(follower);
    subs.push(fresh);
    await holderAndFollower();
    const made = create();
    await wait(() => created(fresh).includes(made), 'a change after the restart', 30_000);
    expect(created(fresh)).toEqual([made]);
  }, 90_000);
});
