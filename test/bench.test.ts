/**
 * The benchmarks: their queries against the bench's own data (answers and backend calls, so the
 * figures keep measuring the same work), and every benchmark's check mode (`bench/quick.ts --check`:
 * its quick mode at the smallest sizes, all side by side) end to end: each runs and prints
 * well-formed figures, and the functional checks the quick modes carry (every subscriber served,
 * every soak request answered). No timing is asserted; the timed quick modes are `npm run bench`'s.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_TOKEN } from '../bench/constants';
import { NOMAD_LIST, ONE_VOLUME, OPENSTACK_LIST, PLAIN_LIST } from '../bench/queries';
import { batches, BENCHES, envOf, rowsOf, type Bench, type Outcome } from '../bench/quick';
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
    expect(one.body).toEqual({
      data: {
        volume: {
          id: first.body.data.volumes.nodes[0].id,
          name: 'bench-000',
          status: 'IN_USE',
          sizeBytes: 10737418240,
          attachments: [{ state: 'ATTACHED' }],
        },
      },
    });
    expect(sim.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/volume/csi/bench-000']);

    sim.clearRequests();
    const list = await gw.gql(NOMAD_LIST, {}, auth);
    expect(list.body.errors).toBeUndefined();
    const nodes = list.body.data.volumes.nodes as any[];
    expect(nodes).toHaveLength(100);
    const claimed = nodes.filter((v) => v.attachments.length > 0);
    expect(claimed.map((v) => v.name)).toEqual(
      Array.from({ length: 20 }, (_, k) => `bench-${String(k * 5).padStart(3, '0')}`),
    );
    expect(claimed[1].attachments).toEqual([
      {
        state: 'ATTACHED',
        access: 'READ_WRITE',
        consumer: { allocationId: expect.any(String), jobId: 'job-5', node: { id: 'node-bench-1' } },
      },
    ]);
    // One list call (stubs carry no allocations), then one read per volume.
    expect(sim.requests()).toHaveLength(101);

    // The end-to-end list (bench/run.ts replays its one call as direct REST).
    sim.clearRequests();
    const plain = await gw.gql(PLAIN_LIST, {}, auth);
    expect(plain.body.data.volumes.nodes).toHaveLength(100);
    expect(sim.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/volumes']);
  });

  it('should list 100 OpenStack volumes with their servers in 2 backend calls once Keystone and the version documents are cached', async () => {
    const sim = new OpenStackSimulator({});
    seedOpenStackBench(sim);
    const { keystoneUrl } = await sim.listen();
    closers.push(() => sim.close());
    const token = sim.issueToken({ user: 'bench', project: 'bench' });
    const gw = await startGatewayFor([
      {
        id: 'os',
        kind: 'openstack',
        url: keystoneUrl,
        region: 'RegionOne',
        interface: 'public',
        operationTimeoutMs: 10_000,
        timeoutMs: 5_000,
        maxConnections: 16,
        readRetries: 2,
      },
    ]);
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
    expect([...servers].sort()).toEqual(
      Array.from({ length: 20 }, (_, s) => `bench-server-${String(s).padStart(2, '0')}`),
    );
    expect(attached[0].attachments[0]).toEqual({
      state: 'ATTACHED',
      device: expect.stringMatching(/^\/dev\/vd[bcd]$/),
      consumer: { serverId: expect.any(String), name: expect.any(String), status: 'ACTIVE' },
    });
    // The volume list, then one server list for the 20 distinct servers (over LIST_STRATEGY_THRESHOLD).
    expect(
      sim.requests().map((r) => `${r.service} ${r.method} ${r.path.replace(/\/v3\/[0-9a-f]+\//, '/v3/:project/')}`),
    ).toEqual(['cinder GET /v3/:project/volumes/detail', 'nova GET /v2.1/servers/detail']);

    // The end-to-end scenarios make one Cinder call each (bench/run.ts replays it as direct REST).
    const project = (path: string): string => path.replace(/\/v3\/[0-9a-f]+\//, '/v3/:project/');
    sim.clearRequests();
    const plain = await gw.gql(PLAIN_LIST, {}, auth);
    expect(plain.body.data.volumes.nodes).toHaveLength(100);
    expect(sim.requests().map((r) => `${r.service} ${r.method} ${project(r.path)}`)).toEqual([
      'cinder GET /v3/:project/volumes/detail',
    ]);
    sim.clearRequests();
    const one = await gw.gql(ONE_VOLUME, { id: nodes[0].id }, auth);
    expect(one.body.errors).toBeUndefined();
    expect(sim.requests().map((r) => `${r.service} ${r.method} ${project(r.path)}`)).toEqual([
      expect.stringMatching(/^cinder GET \/v3\/:project\/volumes\/[0-9a-f-]+$/),
    ]);
  });
});

describe('bench/quick.ts: what runs side by side', () => {
  const names = (bs: Bench[][]): string[][] => bs.map((b) => b.map((x) => x.name));

  it('should give each quick mode that measures a CPU-sensitive ratio the machine alone, and run the others together', () => {
    const quick = names(batches(BENCHES, 'quick'));
    expect(quick.flat()).toEqual(BENCHES.map((b) => b.name));
    for (const name of ['run', 'cpu-per-request', 'inmemory', 'fanout', 'fanout-replicas'])
      expect(quick).toContainEqual([name]);
    expect(quick).toContainEqual(['gc', 'replicas', 'sentinel-failover', 'heap', 'live', 'soak']);
  });

  it('should run every full mode alone, in order', () => {
    expect(names(batches(BENCHES, 'full'))).toEqual(BENCHES.filter((b) => b.full !== false).map((b) => [b.name]));
  });

  it('should run every check mode side by side, each with settings its script reads', () => {
    expect(names(batches(BENCHES, 'check'))).toEqual([BENCHES.map((b) => b.name)]);
    for (const b of BENCHES) {
      const source = readFileSync(join(__dirname, '..', b.script), 'utf8');
      // A misspelt setting would leave the check mode at its quick mode's sizes, unnoticed.
      for (const name of Object.keys(b.check)) {
        expect({ bench: b.name, name, read: new RegExp(`process\\.env\\.${name}\\b`).test(source) }).toEqual({
          bench: b.name,
          name,
          read: true,
        });
      }
    }
  });
});

describe('the benchmarks end to end (their check modes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-check-'));
  let outcomes: Outcome[] = [];
  let status: number | null = null;
  const md = (name: string): string => readFileSync(join(dir, `${name}.md`), 'utf8');
  const ran = (name: string): boolean => outcomes.some((o) => o.name === name && o.status !== 'skipped');
  /** The environment benchmark `name` ran with (its sizes). */
  const env = (name: string): Record<string, string> =>
    envOf(
      BENCHES.find((b) => b.name === name)!,
      'check',
      '',
    );

  beforeAll(() => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/quick.ts', '--check'], {
      cwd: join(__dirname, '..'),
      env: { ...process.env, QUICK_DIR: dir },
      encoding: 'utf8',
      timeout: 400_000,
    });
    status = run.status;
    // Each test below reads what its benchmark left; a failed one fails the first test, not every one.
    outcomes = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Outcome[];
  }, 420_000);

  it('should run every benchmark present, each printing figures that are numbers', () => {
    expect(outcomes.map((o) => o.name)).toEqual(BENCHES.map((b) => b.name));
    for (const o of outcomes) {
      if (o.status === 'skipped') continue;
      expect({ name: o.name, status: o.status, error: o.error }).toEqual({
        name: o.name,
        status: 'ok',
        error: undefined,
      });
      expect(o.figures.length).toBeGreaterThan(0);
      for (const [, value] of o.figures) expect(value).toMatch(/^-?\d/);
    }
    // The end-to-end and CPU benchmarks are this checkout's own: never skipped.
    expect(ran('run') && ran('cpu-per-request')).toBe(true);
    expect(status).toBe(0);
  });

  it("doctor: a pass row per backend over the check's view with problems found, and one facts call per pass (one more per degraded Nomad plugin)", () => {
    expect(ran('doctor')).toBe(true);
    const rows = rowsOf(md('doctor'), /^(Nomad|OpenStack|memory)$/);
    const passes = rows.filter((r) => r.length === 6);
    expect(passes.map((r) => [r[0], r[1]])).toEqual(
      ['Nomad', 'OpenStack', 'memory'].map((b) => [b, env('doctor').DOCTOR_VOLUMES]),
    );
    for (const r of passes) expect(Number(r[2])).toBeGreaterThan(0);
    expect(rows.filter((r) => r.length === 5).map((r) => [r[0], r[2]])).toEqual([
      ['Nomad', '1'],
      ['Nomad', '2'],
      ['OpenStack', '1'],
    ]);
  });

  it('gc: a row per query, the lists causing scavenges whose surviving bytes are measured', () => {
    expect(ran('gc')).toBe(true);
    const rows = rowsOf(md('gc'), /^(Nomad list|OpenStack list|\{ __typename)/);
    expect(rows.map((r) => r[0])).toEqual([
      'Nomad list of 100',
      '{ __typename } (Nomad configured)',
      'OpenStack list of 100',
    ]);
    for (const r of [rows[0]!, rows[2]!]) {
      expect(Number(r[2])).toBeGreaterThan(0);
      expect(r[3]).toMatch(/^\d+\.\d+$/);
    }
  });

  it('end to end: one row per scenario and connection count, the same one backend call per request on both sides, no errors', () => {
    const rows = rowsOf(md('run'), /^(Nomad|OpenStack) /).filter((r) => /^\d+$/.test(r[1]!));
    expect(rows.map((r) => `${r[0]} ${r[1]}`)).toEqual([
      'Nomad volume(id) 1',
      'Nomad volume(id) 50',
      'Nomad volumes(first: 100) 1',
      'Nomad volumes(first: 100) 50',
      'OpenStack volume(id) 1',
      'OpenStack volume(id) 50',
      'OpenStack volumes(first: 100) 1',
      'OpenStack volumes(first: 100) 50',
    ]);
    for (const r of rows) {
      expect(r.at(-2)).toBe('1.00 / 1.00'); // backend calls per request, gateway / direct
      expect(r.at(-1)).toBe('0'); // errors
      expect(Number(r[5])).toBeGreaterThan(0); // gateway CPU per request
    }
  });

  it('the list CPU per request: one figure for this checkout', () => {
    const out = readFileSync(join(dir, 'cpu-per-request.out'), 'utf8');
    expect(out).toMatch(/^ratio: list CPU per request \w+ ms = \d+\.\d\d /m);
  });

  it('event fragments: every subscriber had every change with no error; a heavy fragment reads once per change and credential', () => {
    if (!ran('event-fragments')) return;
    const n = env('event-fragments').EVENT_FRAGMENTS_SUBSCRIBERS!;
    const rows = rowsOf(md('event-fragments').split('Change by change')[0]!, /^(light|heavy), /);
    expect(rows.map((r) => r[0])).toEqual([
      'light, one token',
      'heavy, one token',
      `light, ${n} tokens`,
      `heavy, ${n} tokens`,
    ]);
    for (const r of rows) {
      expect(r[1]).toBe(n); // subscribed
      const [got, owed] = r[7]!.split(' / ').map(Number);
      expect(got).toBe(owed);
      expect(r[8]).toBe('0'); // results with errors
    }
    // Backend reads and executions on the first change (the plugin cache serves the later ones).
    const first = (r: string[], column: number): string => r[column]!.split(' / ')[0]!;
    expect(rows.map((r) => first(r, 3))).toEqual(['0', '1', '0', n]);
    expect(rows.map((r) => first(r, 2))).toEqual(['1', '1', '1', n]);
  });

  it('fan-out: every subscriber subscribed and received every event', () => {
    if (!ran('fanout')) return;
    const rows = rowsOf(md('fanout'), /^\d+$/);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    const [asked, subscribed, failed, , , , , , delivered, rss, closes] = rows[0]!;
    const n = env('fanout').FANOUT_STEPS!;
    expect([asked, subscribed, failed]).toEqual([n, n, '0']);
    const [got, owed] = delivered!.split(' / ').map(Number);
    // Two events at least per claim-and-release pair, to each of the n subscribers.
    expect(owed).toBeGreaterThanOrEqual(2 * Number(n));
    expect(got).toBe(owed);
    expect(Number(rss)).not.toBeNaN();
    expect(closes).toBe('none');
  });

  it('fan-out through Redis: each server, one process and both replicas apart, served every subscriber every event', () => {
    const text = md('fanout-replicas');
    const n = env('fanout-replicas').FANOUT_REPLICAS_SUBSCRIBERS!;
    // The first table: one row per server.
    const rows = rowsOf(text.split('**The two replicas apart**')[0]!, /^(one process|2 replicas|baseline)/);
    expect(rows.map((r) => r[0]!.replace(/ \(.*/, ''))).toEqual(['one process', '2 replicas on Redis']);
    for (const [, subscribed, , , , , , , , , delivered] of rows) {
      expect(subscribed).toBe(n);
      const [got, owed] = delivered!.split(' / ').map(Number);
      expect(owed).toBeGreaterThanOrEqual(2 * Number(n)); // a claim and its release, to each subscriber
      expect(got).toBe(owed);
    }
    // Half of the subscribers on each replica, each half receiving every event.
    const replicas = rowsOf(text, /^(holder|follower) replica$/);
    expect(replicas.map((r) => r[0])).toEqual(['holder replica', 'follower replica']);
    const frames = replicas.map((r) => Number(r[1]));
    expect(frames[0]).toBe(frames[1]);
    expect(frames[0]! + frames[1]!).toBe(Number(rows[1]![10]!.split(' / ')[0]));
    // Every process's CPU during delivery is a figure (run / waiting), and the target is judged.
    const cpuTable = text.split('**CPU during delivery**')[1]!.split('**Each step apart**')[0]!;
    const cpu = rowsOf(cpuTable, /^(one process|2 replicas|baseline)/);
    expect(cpu).toHaveLength(2);
    for (const r of cpu) for (const cell of r.slice(2, 7)) expect(cell).toMatch(/^\d+\.\d \/ \d+\.\d$/);
    expect(text).toMatch(/\*\*Target: p99 ≤ 150 ms with the load split over 2 replicas: (met|not met)\*\*/);
  });

  it("replicas: Redis' cost by command for 1 and 3 replicas, per entry appended above the idle rate", () => {
    const text = md('replicas');
    const header = text.split('\n').find((l) => l.startsWith('| Redis |'))!;
    const n = env('replicas').REPLICAS_SUBSCRIBERS!;
    expect(header).toBe(`| Redis | 1 replica on Redis, ${n} sub. | 3 replicas on Redis, ${n} sub. |`);
    // Every replica waits on the stream and reads it with the read script, and the holder appends
    // inside its fenced script.
    const row = (name: string): string[] => rowsOf(text, new RegExp(`^${name}$`))[0]!.slice(1);
    for (const cell of [...row('`evalsha`'), ...row('`xread`')]) expect(Number(cell)).toBeGreaterThan(0);
    for (const cell of row('`xadd`')) expect(cell).toMatch(/^(\d+\.\d) \(\1 in scripts\)$/);
    for (const cell of row('\\*\\*per entry appended, above idle: sent / all\\*\\*'))
      expect(cell).toMatch(/^-?\d+\.\d \/ -?\d+\.\d$/);
  });

  it('heap: two snapshots compared per subscription, by kind of object', () => {
    const text = md('heap');
    const total = /\*\*JS heap per subscription: ([\d.]+) KiB\.\*\*/.exec(text);
    // Every subscription holds at least its socket and WebSocket objects.
    expect(Number(total![1])).toBeGreaterThan(0.5);
    const kinds = text.split('\n').filter((l) => l.startsWith('| `'));
    expect(kinds.length).toBeGreaterThanOrEqual(10);
    // One WebSocket per subscription, counted over every kind (the table shows only the largest).
    expect(/WebSocket objects per subscription \(one socket\s+each\): ([\d.]+)\./.exec(text)?.[1]).toBe('1.00');
  });

  it('live path: latencies measured, backend requests flat, watch-fed reads cheaper in calls', () => {
    const text = md('live');
    const latency = rowsOf(text, /^(Nomad|OpenStack) /).filter((r) => /^\d+$/.test(r[1]!));
    expect(latency).toHaveLength(2);
    for (const [, samples, p50] of latency) {
      expect(Number(samples)).toBeGreaterThan(0);
      expect(Number(p50)).not.toBeNaN(); // every sample arrived (a missed event is NaN)
    }
    const load = rowsOf(text, /^\d+$/);
    expect(load.map((r) => r[0])).toEqual(['1', '100']);
    // Subscribers do not add backend requests: the watcher's stream, and per credential (3) one start
    // check of the token and one access check of the namespace, each cached.
    for (const [, , , checks] of load) expect(Number(checks)).toBeLessThanOrEqual(6);
    expect(rowsOf(text, /^(no watcher|watcher)/).map((r) => Number(r[1]))).toEqual([101, 2]);
  });

  it('soak: every request and session answered as expected, heap and RSS read after each round', () => {
    const rows = rowsOf(md('soak'), /^\d+$/);
    const { SOAK_ROUNDS: rounds, SOAK_REQUESTS: requests, SOAK_SESSIONS: sessions } = env('soak');
    // Each round's requests and sessions, all of them counted, after an idle start.
    expect(rows.map((r) => r.slice(0, 3))).toEqual(
      Array.from({ length: Number(rounds) + 1 }, (_, k) => [k, k * Number(requests), k * Number(sessions)].map(String)),
    );
    for (const [, , , heap, rss] of rows) {
      expect(Number(heap)).toBeGreaterThan(0);
      expect(Number(rss)).toBeGreaterThan(0);
    }
  });
});
