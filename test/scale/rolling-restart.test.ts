/**
 * A rolling restart of three replicas behind HAProxy (issue 29, chaos): a real redis-server, a
 * real HAProxy (deploy/haproxy/haproxy.cfg), three gateway processes. One client subscribes
 * through the load balancer and, as the README's client does, resubscribes `since` its last cursor
 * whenever its socket closes; volumes are created throughout. Each replica in turn gets SIGTERM
 * (it hands its leases over, closes its sockets with 1012 and exits), a new one starts and HAProxy
 * is reloaded with it. The client sees every change once, in order, across its reconnects.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { MGMT } from '../support/constants';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { startHaproxy, stopHaproxies, type HaproxyUnderTest } from '../support/haproxy';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';

/** `until` with a bound for a loaded machine: processes here wait out leases and hand-overs. */
const wait = (check: () => boolean | Promise<boolean>, what: string | (() => string), ms = 45_000): Promise<void> =>
  until(check, what, ms);
import type { NomadSimulator } from '../../simulators/nomad';
import { nomadBackend, readyz, SERVICE_TOKEN, startReplica, type Replica } from './support';

const nativeOf = (id: string): string => (JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as string[])[3]!;

describe('a rolling restart of three replicas behind HAProxy', () => {
  let redis: RedisServerUnderTest;
  let sim: NomadSimulator;
  let lb: HaproxyUnderTest;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    sim = await startNomad();
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 1);
    replicas = await Promise.all(['a', 'b', 'c'].map((n) => startReplica(n, redis.url, nomadBackend(sim.url))));
    lb = await startHaproxy(replicas.map((r) => r.url));
    // Ready: one replica watches Nomad and every replica's view is complete (before that, SUBSCRIBED
    // names the backend in omittedBackends: its first view is not read yet).
    await wait(
      async () => {
        const parts = (await Promise.all(replicas.map(readyz))).map((b) => b.replication.backends[0]);
        return parts.filter((p) => p.role === 'HOLDER').length === 1 && parts.every((p) => p.viewComplete);
      },
      'one holder and complete views',
      30_000,
    );
  }, 90_000);
  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await stopHaproxies();
    await disposeAll();
    await stopRedisServers();
  });

  it('should deliver every change once, in order, to a client that resumes with its cursor across the restarts', async () => {
    const received: string[] = [];
    const errors: unknown[] = [];
    let last: string | undefined;
    let subscriptions = 0;
    let stopped = false;
    const connect = (): Client =>
      createClient({
        url: `${lb.url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { 'X-Nomad-Token': MGMT },
        lazy: false,
        retryAttempts: 0,
      });
    const client = connect();
    // A fresh client per socket: the README's loop, resubscribing `since` the last cursor it saw.
    const follow = (c = client): void => {
      subscriptions++;
      c.subscribe<{ volumeChanged: { type: string; volumeId: string | null; cursor: string } }>(
        {
          query: 'subscription($since: String) { volumeChanged(since: $since) { type volumeId cursor } }',
          variables: last ? { since: last } : {},
        },
        {
          next: (v) => {
            const e = v.data?.volumeChanged;
            if (!e) return void errors.push(v.errors);
            if (e.type !== 'SUBSCRIBED') last = e.cursor;
            if (e.type === 'CREATED') received.push(nativeOf(e.volumeId!));
          },
          error: () => again(),
          complete: () => again(),
        },
      );
    };
    const clients = [client];
    const again = (): void => {
      if (stopped) return;
      setTimeout(() => {
        const next = connect();
        clients.push(next);
        follow(next);
      }, 100);
    };
    follow();
    const made: string[] = [];
    let n = 0;
    const changes = setInterval(() => made.push(seedVolumes(sim, 1, 'default', `r${++n}`)[0]!), 300);
    try {
      await wait(() => received.length >= 2, 'the first changes');
      for (let i = 0; i < replicas.length; i++) {
        const old = replicas[i]!;
        await old.stop();
        replicas[i] = await startReplica(`${old.name}2`, redis.url, nomadBackend(sim.url));
        await lb.reload(replicas.map((r) => r.url));
        const before = received.length;
        await wait(() => received.length > before + 1, `changes after restarting replica ${old.name}`, 30_000);
      }
    } finally {
      clearInterval(changes);
    }
    try {
      await wait(
        () => received.length >= made.length,
        () =>
          `all ${made.length} changes (got ${received.length}: ${received.join(' ')}; made ${made.join(' ')}; ${subscriptions} subscriptions, ${errors.length} errors)`,
        30_000,
      );
    } finally {
      stopped = true;
      for (const c of clients) void c.dispose();
    }
    expect(errors).toEqual([]);
    expect(received).toEqual(made);
    // It did reconnect: at least once per restarted replica it was on.
    expect(subscriptions).toBeGreaterThan(1);
  }, 240_000);
});
