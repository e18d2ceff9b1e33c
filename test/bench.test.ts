/**
 * The benchmark: its queries against the bench's own data (answers and backend calls, so the
 * figures keep measuring the same work), and its short mode end to end. No timing is asserted.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_TOKEN } from '../bench/constants';
import { NOMAD_LIST, ONE_VOLUME, OPENSTACK_LIST } from '../bench/queries';
import { seedNomadBench, seedOpenStackBench } from '../bench/seed';
import { NomadSimulator } from '../simulators/nomad';
import { OpenStackSimulator } from '../simulators/openstack';
import { disposeAll, startGatewayFor } from './support/harness';

describe('benchmark queries on the bench data', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await disposeAll();
    await Promise.all(closers.splice(0).map((c) => c()));
  });

  it('should read one Nomad volume and list 100 with their allocations, in 1 and 101 backend calls', async () => {
    const sim = new NomadSimulator({ acl: { enabled: true } });
    seedNomadBench(sim);
    await sim.listen(0, '127.0.0.1');
    closers.push(() => sim.close());
    const gw = await startGatewayFor([{ id: 'bench', url: sim.url }]);
    const auth = { 'x-nomad-token': BENCH_TOKEN };

    const first = await gw.gql('{ volumes(first: 1) { nodes { id nativeId } } }', {}, auth);
    expect(first.body.data.volumes.nodes[0].nativeId).toBe('bench-000');
    sim.clearRequests();
    const one = await gw.gql(ONE_VOLUME, { id: first.body.data.volumes.nodes[0].id }, auth);
    expect(one.body).toEqual({ data: { volume: { id: first.body.data.volumes.nodes[0].id, name: 'bench-000', status: 'IN_USE', sizeBytes: 10737418240, attachments: [{ state: 'ATTACHED' }] } } });
    expect(sim.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/volume/csi/bench-000']);

    sim.clearRequests();
    const list = await gw.gql(NOMAD_LIST, {}, auth);
    expect(list.body.errors).toBeUndefined();
    const nodes = list.body.data.volumes.nodes as any[];
    expect(nodes).toHaveLength(100);
    const claimed = nodes.filter((v) => v.attachments.length > 0);
    expect(claimed.map((v) => v.name)).toEqual(Array.from({ length: 20 }, (_, k) => `bench-${String(k * 5).padStart(3, '0')}`));
    expect(claimed[1].attachments).toEqual([{ state: 'ATTACHED', access: 'READ_WRITE', consumer: { allocationId: expect.any(String), jobId: 'job-5', node: { id: 'node-bench-1' } } }]);
    // One list call (stubs carry no allocations), then one read per volume.
    expect(sim.requests()).toHaveLength(101);
  });

  it('should list 100 OpenStack volumes with their servers in 2 backend calls once Keystone and the version documents are cached', async () => {
    const sim = new OpenStackSimulator({});
    seedOpenStackBench(sim);
    const { keystoneUrl } = await sim.listen();
    closers.push(() => sim.close());
    const token = sim.issueToken({ user: 'bench', project: 'bench' });
    const gw = await startGatewayFor([{ id: 'os', kind: 'openstack', url: keystoneUrl, region: 'RegionOne', interface: 'public', operationTimeoutMs: 10_000, timeoutMs: 5_000, maxConnections: 16, readRetries: 2 }]);
    const auth = { 'x-auth-token': token };

    await gw.gql(OPENSTACK_LIST, {}, auth);
    sim.clearRequests();
    const res = await gw.gql(OPENSTACK_LIST, {}, auth);
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.volumes.nodes as any[];
    expect(nodes).toHaveLength(100);
    expect(nodes.every((v) => v.details.sizeGiB === 10)).toBe(true);
    const attached = nodes.filter((v) => v.attachments.length > 0);
    expect(attached).toHaveLength(60);
    const servers = new Set(attached.map((v) => v.attachments[0].consumer.name));
    expect([...servers].sort()).toEqual(Array.from({ length: 20 }, (_, s) => `bench-server-${String(s).padStart(2, '0')}`));
    expect(attached[0].attachments[0]).toEqual({ state: 'ATTACHED', device: expect.stringMatching(/^\/dev\/vd[bcd]$/), consumer: { serverId: expect.any(String), name: expect.any(String), status: 'ACTIVE' } });
    // The volume list, then one server list for the 20 distinct servers (over LIST_STRATEGY_THRESHOLD).
    expect(sim.requests().map((r) => `${r.service} ${r.method} ${r.path.replace(/\/v3\/[0-9a-f]+\//, '/v3/:project/')}`)).toEqual(['cinder GET /v3/:project/volumes/detail', 'nova GET /v2.1/servers/detail']);
  });
});

it('should run the benchmark in short mode and write one row per scenario and connection count, without errors', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'RESULTS.md');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, BENCH_SHORT: '1', BENCH_OUT: out },
    encoding: 'utf8',
    timeout: 170_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  const md = readFileSync(out, 'utf8');
  const rows = md.split('\n').filter((l) => /^\| (volume|volumes|OpenStack)/.test(l));
  // Nomad volume(id), Nomad volumes(first: 100), OpenStack volumes(first: 100), each at 1 and 50 connections.
  expect(rows).toHaveLength(6);
  // The OpenStack batch-strategy table: one row per batch size, each naming the faster strategy twice.
  const strategy = md.split('\n').filter((l) => /^\| \d+ \|/.test(l));
  expect(strategy.map((l) => l.split('|')[1]!.trim())).toEqual(['1', '2', '4', '8', '16', '32']);
  for (const row of strategy) expect(row.match(/\| (shows|list) \|/g)).toHaveLength(2);
  for (const row of rows) {
    const cells = row.split('|').map((c) => c.trim());
    expect(cells.at(-2)).toBe('0'); // errors
    expect(cells.at(-3)).toMatch(/^\d+ \/ \d+$/); // backend calls
  }
}, 180_000);

/** Runs one benchmark script in its short mode into a temporary results file; answers that file's text. */
function runShort(script: string, env: Record<string, string>): string {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'RESULTS.md');
  const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: join(__dirname, '..'), env: { ...process.env, ...env, BENCH_OUT: out }, encoding: 'utf8', timeout: 170_000 });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  return readFileSync(out, 'utf8');
}

const tableRows = (md: string): string[][] => md.split('\n').filter((l) => /^\| \d/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));

it('should run the fan-out benchmark in short mode: every subscriber subscribed and received every event', () => {
  const md = runShort('bench/fanout.ts', { FANOUT_SHORT: '1' });
  const rows = tableRows(md);
  expect(rows).toHaveLength(1);
  const [asked, subscribed, failed, , , , , , delivered, rss, closes] = rows[0]!;
  expect([asked, subscribed, failed]).toEqual(['200', '200', '0']);
  const [got, owed] = delivered!.split(' / ').map(Number);
  // Two events at least per claim-and-release pair, to each of the 200 subscribers.
  expect(owed).toBeGreaterThanOrEqual(400);
  expect(got).toBe(owed);
  expect(Number(rss)).not.toBeNaN();
  expect(closes).toBe('none');
}, 180_000);

it('should run the heap benchmark in short mode: two snapshots compared per subscription, by kind of object', () => {
  const md = runShort('bench/heap.ts', { HEAP_SHORT: '1' });
  const total = /\*\*JS heap per subscription: ([\d.]+) KiB\.\*\*/.exec(md);
  expect(total).not.toBeNull();
  // Every subscription holds at least its socket and WebSocket objects.
  expect(Number(total![1])).toBeGreaterThan(0.5);
  const kinds = md.split('\n').filter((l) => l.startsWith('| `'));
  expect(kinds.length).toBeGreaterThanOrEqual(10);
  expect(kinds.some((l) => l.startsWith('| `object:WebSocket` | 1.00 |'))).toBe(true);
}, 180_000);

it('should run the live-path benchmark in short mode: latencies measured, backend requests flat, watch-fed reads cheaper in calls', () => {
  const md = runShort('bench/live.ts', { BENCH_LIVE_SHORT: '1' });
  const latency = md.split('\n').filter((l) => /^\| (Nomad|OpenStack) .*\| \d+ \|/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  expect(latency).toHaveLength(2);
  for (const [, samples, p50] of latency) {
    expect(Number(samples)).toBeGreaterThan(0);
    expect(Number(p50)).not.toBeNaN(); // every sample arrived (a missed event is NaN)
  }
  const load = tableRows(md);
  expect(load.map((r) => r[0])).toEqual(['1', '100']);
  // Subscribers do not add backend requests: the watcher's stream, and per credential (3) one start
  // check of the token and one access check of the namespace, each cached.
  for (const [, , , checks] of load) expect(Number(checks)).toBeLessThanOrEqual(6);
  const calls = md.split('\n').filter((l) => /^\| (no watcher|watcher)/.test(l)).map((l) => Number(l.split('|')[2]));
  expect(calls).toEqual([101, 2]);
}, 180_000);

it('should run the soak in short mode: every request and session answered as expected, heap and RSS read after each round', () => {
  const md = runShort('bench/soak.ts', { SOAK_SHORT: '1' });
  const rows = tableRows(md);
  expect(rows.map((r) => r.slice(0, 3))).toEqual([['0', '0', '0'], ['1', '400', '100'], ['2', '800', '200']]);
  for (const [, , , heap, rss] of rows) {
    expect(Number(heap)).toBeGreaterThan(0);
    expect(Number(rss)).toBeGreaterThan(0);
  }
}, 180_000);
