/**
 * Tracked operations across replicas (issue 29, item 5; docs/scaling.md): two gateway processes
 * (server/main.ts) on one real redis-server (or a real Redis Cluster with `VG_TEST_REDIS=cluster`,
 * as `npm run test:redis-ha` runs it), both on the same OpenStack simulator through two
 * backends: `osw` with the gateway's service credential (a watcher), `osp` without (operations
 * polled with the caller's token). Replica A starts the operations and is killed with SIGKILL.
 * - B's `operationUpdated` (graphql-ws) follows an attach A drives, in order, to SUCCEEDED;
 * - an extend A polled on `osp` ends TIMED_OUT on B at its deadline, naming the lost replica
 *   (before: RUNNING until an hour after the deadline);
 * - an extend on the watched `osw` is taken over by B and reaches SUCCEEDED;
 * - no caller token or service password is in Redis;
 * - a stale driver cannot write over a newer version or a terminal record (the fenced write);
 * - what finished while Redis was down reaches it once it is back, even empty.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ackedClient } from '../ws/helpers';
import { RedisOperationStore } from '../../subscriptions/operations';
import { operationRecord as record } from '../support/operation-record';
import { disposeAll, OS, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { startGatewayProcess } from '../support/gateway-process';
import { stopRedisServers } from '../support/redis';
import { keysOf, startSharedRedis, type SharedRedisUnderTest } from '../support/redis-topology';
import type { RedisClient } from '../../subscriptions/redis-client';
import { isTerminal, settle } from '../support/until';

const PREFIX = 'ops:';
const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`;
const EXTEND = `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { operation { id state } } }`;
const READ = `query($id: ID!) { volumeOperation(id: $id) { id state failureReason backendStatus } }`;
/** The unwatched backend's operation deadline. */
const POLLED_TIMEOUT_MS = 6_000;

type Gateway = ReturnType<typeof startGatewayProcess> & { url: string };

let redis: SharedRedisUnderTest;
let os: OpenStackUnderTest;
let probe: RedisClient;
let a: Gateway;
let b: Gateway;
/** Paused (SIGSTOP) while B takes its operation over, then resumed. */
let c: Gateway;

const gid = (backend: string, nativeId: string): string =>
  Buffer.from(JSON.stringify(['Volume', backend, os.demo, nativeId])).toString('base64url');

async function gql(gw: Gateway, query: string, variables: Record<string, unknown>): Promise<any> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-token': os.demoToken },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const read = async (gw: Gateway, id: string): Promise<any> => (await gql(gw, READ, { id })).volumeOperation;

async function start(config: string): Promise<Gateway> {
  const gw = startGatewayProcess({ GATEWAY_CONFIG: config, LOG_LEVEL: 'warn' });
  return Object.assign(gw, { url: await gw.serving() });
}

beforeAll(async () => {
  redis = await startSharedRedis();
  os = await startOpenStack();
  probe = redis.connect();
  probe.on('error', () => {});
  const service = { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' };
  const backend = { kind: 'openstack', url: os.keystoneUrl, region: 'RegionOne', interface: 'public' };
  const config = join(mkdtempSync(join(tmpdir(), 'vg-ops-')), 'gateway.json');
  writeFileSync(
    config,
    JSON.stringify({
      backends: [
        { ...backend, id: 'osw', auth: service, watchFastMs: 50, watchSlowMs: 100 },
        { ...backend, id: 'osp', operationTimeoutMs: POLLED_TIMEOUT_MS },
      ],
      redis: { ...redis.config, keyPrefix: PREFIX },
    }),
  );
  [a, b, c] = await Promise.all([start(config), start(config), start(config)]);
}, 90_000);

afterAll(async () => {
  c?.child.kill('SIGCONT');
  for (const gw of [a, b, c]) if (gw) await gw.stop();
  probe?.disconnect();
  await disposeAll();
  await stopRedisServers();
});

it('should show on B, through operationUpdated, every state of an attach A drives, in order, up to SUCCEEDED', async () => {
  os.sim.setDelays({ attachMs: 1_500, attachCompleteMs: 1_500 });
  const server = os.sim.seedServer({ project: os.demo, name: 'app-a' });
  const volume = os.sim.seedVolume({ project: os.demo, name: 'data-a', size: 1 });
  const started = await gql(a, ATTACH, {
    i: { volumeId: gid('osp', volume), target: { server: { serverId: server } } },
  });
  const { id } = started.attachVolume.operation;
  expect(started.attachVolume.operation.state).toBe('PENDING');

  const c = await ackedClient(b.url.replace(/^http/, 'ws'), { 'X-Auth-Token': os.demoToken });
  c.send({
    id: 's',
    type: 'subscribe',
    payload: {
      query: 'subscription($id: ID!) { operationUpdated(id: $id) { state backendStatus } }',
      variables: { id },
    },
  });
  const states: string[] = [];
  const seen: string[] = [];
  for (;;) {
    const m = await c.nextFor('s', 30_000);
    if (m.type === 'complete') break;
    expect(m.type).toBe('next');
    const { state, backendStatus } = m.payload.data.operationUpdated;
    states.push(state);
    seen.push(`${state} ${backendStatus}`);
  }
  c.ws.close();
  // B never polled it: every change after the first came through Redis' stream, in order.
  const order = ['PENDING', 'RUNNING', 'SUCCEEDED'];
  expect(states.at(-1)).toBe('SUCCEEDED');
  expect(states).toContain('RUNNING');
  expect(states.map((s) => order.indexOf(s))).toEqual([...states.map((s) => order.indexOf(s))].sort());
  // Each change once (RUNNING may come twice: reserved, then attaching).
  expect(seen).toEqual([...new Set(seen)]);
}, 60_000);

it('should finish on B what A drove when A is killed (TIMED_OUT naming A at the deadline when unwatched, SUCCEEDED when B watches the backend), and what C drove while C is paused, which writes nothing once resumed', async () => {
  // Slow enough that neither extend finishes before A is gone, and the polled one outlives its deadline.
  os.sim.setDelays({ extendMs: 8_000 });
  const polled = os.sim.seedVolume({ project: os.demo, name: 'polled', size: 1 });
  const watched = os.sim.seedVolume({ project: os.demo, name: 'watched', size: 1 });
  const p = (await gql(a, EXTEND, { i: { volumeId: gid('osp', polled), newSizeGiB: 2 } })).extendVolume.operation;
  const w = (await gql(a, EXTEND, { i: { volumeId: gid('osw', watched), newSizeGiB: 2 } })).extendVolume.operation;
  const paused = os.sim.seedVolume({ project: os.demo, name: 'paused', size: 1 });
  const pc = (await gql(c, EXTEND, { i: { volumeId: gid('osw', paused), newSizeGiB: 2 } })).extendVolume.operation;
  const replicaC = (await keysOf(probe, `${PREFIX}{live}:replica:*`)).find((k) => k.includes(`-${c.child.pid}-`));
  expect(replicaC).toBeDefined();
  const startedAt = Date.now();
  c.child.kill('SIGSTOP');
  a.child.kill('SIGKILL');
  await a.closed;
  expect(['PENDING', 'RUNNING']).toContain((await read(b, p.id)).state);

  const ended = await settle<any>(() => read(b, p.id), isTerminal, 60_000, 200);
  expect(ended).toMatchObject({ state: 'TIMED_OUT', failureReason: expect.stringContaining(`-${a.child.pid}-`) });
  expect(ended.failureReason).toMatch(
    /^the replica that polled it \(.+\) stopped before it finished; .*read the volume$/,
  );
  // Not before its deadline (the replica's liveness TTL may make it later, never an hour).
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(POLLED_TIMEOUT_MS - 1_000);

  const done = await settle<any>(() => read(b, w.id), isTerminal, 60_000, 200);
  expect(done).toMatchObject({ state: 'SUCCEEDED' });
  const stored = await probe.hgetall(`${PREFIX}{live}:operation:${nativeOf(w.id)}`);
  expect(stored).toMatchObject({ s: 'SUCCEEDED', d: '' });

  // C was paused past its liveness TTL: B took its operation over and finished it.
  expect(await settle<any>(() => read(b, pc.id), isTerminal, 60_000, 200)).toMatchObject({ state: 'SUCCEEDED' });
  const before = await probe.hgetall(`${PREFIX}{live}:operation:${nativeOf(pc.id)}`);
  expect(before).toMatchObject({ s: 'SUCCEEDED', d: '' });
  // Resumed, C finds it lost the operation (its stream, or its own write refused) and writes nothing.
  c.child.kill('SIGCONT');
  await c.waitFor(/another replica took over an operation this replica drove/, 30_000);
  expect(await probe.hgetall(`${PREFIX}{live}:operation:${nativeOf(pc.id)}`)).toEqual(before);
  const idC = replicaC!.slice(`${PREFIX}{live}:replica:`.length);
  const writers = (await probe.xrange(`${PREFIX}{live}:operations`, '-', '+'))
    .filter(([, f]) => f[1] === nativeOf(pc.id))
    .map(([, f]) => (f[5] === idC ? 'C' : 'other'));
  // C's writes (PENDING, maybe RUNNING) come first; after B's claim, only B wrote.
  expect(writers[0]).toBe('C');
  expect(writers.slice(writers.indexOf('other'))).not.toContain('C');
  expect(writers.filter((w) => w === 'other').length).toBeGreaterThanOrEqual(2);

  // Nothing of a caller's or of the gateway's credential went to Redis.
  const dump = await dumpKeys();
  expect(dump).toContain('TIMED_OUT');
  expect(dump).not.toContain(os.demoToken);
  expect(dump).not.toContain(OS.adminPassword);
}, 120_000);

it('should refuse a stale driver: no write over a newer version, and never over a terminal record', async () => {
  const a = new RedisOperationStore({ client: probe, keyPrefix: 'fence:', replica: 'replica-a' });
  const b = new RedisOperationStore({ client: probe, keyPrefix: 'fence:', replica: 'replica-b' });
  const r = record({ state: 'RUNNING' });
  expect(await a.write(r, 0, 'replica-a')).toEqual({ written: true, version: 1 });
  // B takes it over (A was paused past its liveness TTL) and finishes it.
  const seen = (await b.read(r.id))!;
  expect(seen).toMatchObject({ version: 1, driver: 'replica-a', record: { state: 'RUNNING' } });
  expect(await b.write({ ...r, updatedAt: r.updatedAt + 1 }, seen.version, 'replica-b')).toEqual({
    written: true,
    version: 2,
  });
  // A wakes up and writes what it had: refused, B's claim stays.
  expect(await a.write({ ...r, backendStatus: 'attaching' }, 1, 'replica-a')).toEqual({ written: false, version: 2 });
  const done = { ...r, state: 'SUCCEEDED' as const, backendStatus: 'in-use', updatedAt: r.updatedAt + 2 };
  expect(await b.write(done, 2, null)).toEqual({ written: true, version: 3 });
  // A stale RUNNING cannot move the terminal record back, whatever version it names.
  for (const expected of [1, 2, 3]) {
    expect(await a.write({ ...r, updatedAt: Date.now() }, expected, 'replica-a')).toEqual({
      written: false,
      version: 3,
    });
    expect(await a.put({ ...r, updatedAt: Date.now() })).toBeUndefined();
  }
  expect(await b.read(r.id)).toEqual({ record: done, version: 3, driver: null });
  expect(await a.get(r.id)).toEqual(done);
  // Every stored change is in the stream once, in order; the refused ones are not.
  const entries = await probe.xrange(b.keys.stream, '-', '+');
  expect(entries.map(([, f]) => [f[1], f[3], f[5], JSON.parse(f[7]!).state])).toEqual([
    [r.id, '1', 'replica-a', 'RUNNING'],
    [r.id, '2', 'replica-b', 'RUNNING'],
    [r.id, '3', 'replica-b', 'SUCCEEDED'],
  ]);
  // Finished: out of the running index.
  expect(await b.running(10)).toEqual([]);
});

it('should write back, once Redis is back empty, an operation that finished on B while Redis was down', async () => {
  os.sim.setDelays({ extendMs: 1_000 });
  const volume = os.sim.seedVolume({ project: os.demo, name: 'during-outage', size: 1 });
  const op = (await gql(b, EXTEND, { i: { volumeId: gid('osw', volume), newSizeGiB: 2 } })).extendVolume.operation;
  await redis.kill();
  // B answers its own operation from its copy meanwhile.
  expect(await settle<any>(() => read(b, op.id), isTerminal, 30_000, 200)).toMatchObject({ state: 'SUCCEEDED' });
  await redis.restart();
  const stored = await settle(
    () => probe.hget(`${PREFIX}{live}:operation:${nativeOf(op.id)}`, 's').catch(() => null),
    (s) => s === 'SUCCEEDED',
    30_000,
    200,
  );
  expect(stored).toBe('SUCCEEDED');
  expect(await probe.zrange(`${PREFIX}{live}:operations-running`, 0, -1)).toEqual([]);
}, 90_000);

/** An operation's native id (the record key's) from its global id. */
function nativeOf(globalId: string): string {
  return (JSON.parse(Buffer.from(globalId, 'base64url').toString()) as string[])[3]!;
}

/** Every key under the prefix and what it holds, as one text. */
async function dumpKeys(): Promise<string> {
  const out: string[] = [];
  for (const key of await keysOf(probe, `${PREFIX}*`)) {
    const type = await probe.type(key);
    if (type === 'hash') out.push(JSON.stringify(await probe.hgetall(key)));
    else if (type === 'stream') out.push(JSON.stringify(await probe.xrange(key, '-', '+')));
    else if (type === 'set') out.push(JSON.stringify(await probe.smembers(key)));
    else if (type === 'zset') out.push(JSON.stringify(await probe.zrange(key, 0, -1)));
    else if (type === 'string') out.push(String(await probe.get(key)));
  }
  return out.join('\n');
}
