/**
 * Redis Sentinel (issue 30): two gateway replicas on a primary and a replica watched by three real
 * sentinels, one Nomad simulator, changes flowing. The primary is killed -9: the gateways follow
 * the new primary without a restart, and the changes made while Redis failed over reach every
 * subscriber once, in order (the holder compares its watcher with the view rebuilt from the new
 * primary and appends what the log lacks). Then a lost tail is forced (the replica cut off and
 * promoted while the primary still took appends): subscribers that had received the lost events
 * end with CURSOR_EXPIRED, their cursors are refused with CURSOR_EXPIRED, never a gap, and a
 * fresh subscription gets what follows.
 */
import { Redis } from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { startSentinelSet, type SentinelSetUnderTest } from '../support/redis-sentinel';
import { until } from '../support/until';
import {
  created,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from './support';

const wait = (check: () => boolean | Promise<boolean>, what: string | (() => string), ms = 45_000): Promise<void> =>
  until(check, what, ms);

describe('replicas on Redis Sentinel', () => {
  let set: SentinelSetUnderTest;
  let sim: NomadSimulator;
  let replicas: Replica[] = [];
  const subs: Subscriber[] = [];
  let n = 0;
  const create = (): string => seedVolumes(sim, 1, 'default', `s${++n}`)[0]!;

  beforeAll(async () => {
    [set, sim] = await Promise.all([startSentinelSet(), startNomad()]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    replicas = await Promise.all(['a', 'b'].map((name) => startReplica(name, set.env, nomadBackend(sim.url))));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.dispose()));
    for (const r of replicas) r.child.kill('SIGKILL');
    await disposeAll();
    await set?.stop();
  });

  const holderAndFollower = async (): Promise<[Replica, Replica]> => {
    let roles: Array<string | null> = [];
    await wait(
      async () => {
        roles = await Promise.all(replicas.map(role));
        return roles.includes('HOLDER') && roles.includes('FOLLOWER');
      },
      () => `one holder and one follower (roles ${JSON.stringify(roles)})`,
    );
    return [replicas[roles.indexOf('HOLDER')]!, replicas[roles.indexOf('FOLLOWER')]!];
  };

  it('should follow the new primary after kill -9 of the old one, without a restart, and deliver every change once, in order', async () => {
    const [holder, follower] = await holderAndFollower();
    const watching = await subscribe(follower);
    const resuming = await subscribe(holder);
    subs.push(watching, resuming);
    const before = [create(), create()];
    await wait(() => created(resuming).length >= 2 && created(watching).length >= 2, 'the first two on both');
    const last = resuming.changes().at(-1)!.cursor;
    const from = await set.primaryPort();
    await set.nodes.find((x) => x.port === from)!.kill();
    const killedAt = Date.now();
    // Made while Redis fails over: the holder's appends fail, and it makes the log whole after.
    const during = [create(), create()];
    await set.failedOver(from);
    await wait(
      () => created(watching).length >= 4,
      () => `the changes made during the failover (${created(watching).join()})`,
    );
    const failoverMs = Date.now() - killedAt;
    const after = [create()];
    await wait(() => created(watching).length >= 5, 'a change after the failover');
    expect(created(watching)).toEqual([...before, ...during, ...after]);
    expect(watching.completed).toBe(false);
    const resumed = await subscribe(follower, last);
    subs.push(resumed);
    await wait(() => created(resumed).length >= 3, 'the replay from the cursor');
    expect(resumed.errors).toEqual([]);
    expect(created(resumed)).toEqual([...during, ...after]);
    // /readyz reads Redis from its background probe (every 5 s): it says so within one interval.
    await wait(async () => {
      const seen = await Promise.all(replicas.map(async (r) => (await readyz(r)).redis));
      return seen.every((x) => x?.status === 'UP' && x.role === 'master');
    }, 'every /readyz to show the new primary UP');
    console.log(`sentinel failover: kill -9 of the primary → the next change delivered in ${failoverMs} ms`);
  }, 120_000);

  it('should end with CURSOR_EXPIRED, never a gap, the subscribers and cursors of a tail the failover lost', async () => {
    await set.ensureReplica();
    const primaryPort = await set.primaryPort();
    const primary = new Redis({ port: primaryPort, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    primary.on('error', () => {});
    try {
      const [holder, follower] = await holderAndFollower();
      const onFollower = await subscribe(follower);
      subs.push(onFollower);
      const kept = create();
      await wait(() => created(onFollower).includes(kept), 'a change both nodes hold');
      expect(await primary.call('WAIT', 1, 5000)).toBeGreaterThanOrEqual(1);
      // Cut the replicas off (as a partition does): what the primary takes from now on is the tail.
      await set.cutOffReplicas();
      const lost = create();
      await wait(() => created(onFollower).includes(lost), 'a change only the primary holds');
      const inTail = onFollower.changes().at(-1)!.cursor;
      await set.nodes.find((x) => x.port === primaryPort)!.kill();
      await set.failedOver(primaryPort);
      await wait(() => onFollower.completed || onFollower.errors.length > 0, 'the subscriber to end');
      expect(JSON.stringify(onFollower.errors)).toContain('CURSOR_EXPIRED');
      const fresh = await subscribe(holder);
      const resumed = await subscribe(follower, inTail);
      subs.push(fresh, resumed);
      expect(JSON.stringify(resumed.errors)).toContain('CURSOR_EXPIRED');
      const next = create();
      // `fresh` starts only after the holder's reader has read from the new primary: before, on a
      // loaded machine its reader sometimes reconnected after the follower's, so `fresh` started in
      // the lost tail and ended with CURSOR_EXPIRED when that reader found the loss.
      await wait(
        () => created(fresh).includes(next),
        () =>
          `a change after the lost tail (fresh subscriber: ${JSON.stringify(fresh.events.slice(-3))}, errors ${JSON.stringify(fresh.errors)}, completed ${fresh.completed})`,
        75_000,
      ).catch(async (err: unknown) => {
        const states = await Promise.all(replicas.map(async (r) => (await readyz(r)).replication));
        throw new Error(`${String(err)}\nreplicas: ${JSON.stringify(states)}`);
      });
      expect(fresh.errors).toEqual([]);
    } finally {
      primary.disconnect();
    }
  }, 150_000);
});
