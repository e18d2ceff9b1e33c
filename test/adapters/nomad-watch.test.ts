/**
 * The Nomad watcher against the simulator over HTTP: claims and releases, creates and deletes,
 * resume after a dropped stream, gap detection past the event buffer, heartbeat timeouts, and
 * that every backend request it makes is on Nomad's route table.
 */
import { MGMT, NODE1, seedVolume } from './nomad-helpers';
import { startWatch, type WatchUnderTest } from './nomad-watch-helpers';

let t: WatchUnderTest;
afterEach(async () => {
  await t?.stop();
});

const ready = (): Promise<void> =>
  t.until(() => t.watcher.current && t.watcher.status().state === 'STREAMING', 'the watcher to stream');
const streams = (): number => t.calls().filter((c) => c === 'GET /v1/event/stream').length;

describe('Nomad watcher: event stream', () => {
  it('builds a complete view, then reports claim and release with the full volume before and after', async () => {
    t = await startWatch({ seed: (u) => seedVolume(u.sim, 'web-data') });
    await ready();
    expect(t.deltas).toEqual([]);
    expect(t.watcher.volume(t.ref('web-data'))).toMatchObject({ complete: true, status: 'AVAILABLE', attachments: [] });
    expect(t.watcher.status()).toMatchObject({
      backend: 'east',
      state: 'STREAMING',
      source: 'EVENT_STREAM',
      volumes: 1,
    });

    const alloc = t.sim.placeAllocation({
      jobId: 'web',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'web-data', mode: 'write' }],
    });
    await t.until(() => t.of('web-data').some((d) => d.after?.attachments[0]?.state === 'ATTACHING'), 'the claim');
    const claim = t.of('web-data').at(-1)!;
    expect(claim.before).toMatchObject({ status: 'AVAILABLE', attachments: [] });
    expect(claim.after).toMatchObject({
      status: 'IN_USE',
      complete: true,
      attachments: [
        {
          consumerId: alloc,
          state: 'ATTACHING',
          access: 'READ_WRITE',
          consumer: { nodeId: NODE1, clientStatus: 'pending' },
        },
      ],
    });
    expect(Date.parse(claim.observedAt)).not.toBeNaN();

    // An allocation status change is not a volume write: the Allocation topic brings it.
    t.sim.setAllocationStatus(alloc, { clientStatus: 'running' });
    await t.until(() => t.watcher.volume(t.ref('web-data'))?.attachments[0]?.state === 'ATTACHED', 'ATTACHED');

    t.sim.setAllocationStatus(alloc, { desiredStatus: 'stop' });
    await t.until(() => t.watcher.volume(t.ref('web-data'))?.attachments.length === 0, 'the release');
    const states = t.of('web-data').map((d) => d.after?.attachments[0]?.state ?? 'none');
    expect(states[0]).toBe('ATTACHING');
    expect(states).toContain('ATTACHED');
    expect(states.at(-1)).toBe('none');
    const release = t.of('web-data').at(-1)!;
    expect(release.before!.attachments).toHaveLength(1);
    expect(release.after).toMatchObject({ status: 'AVAILABLE', attachments: [] });
  });

  it('reports creates and deletes in every namespace, and volume(ref) follows', async () => {
    t = await startWatch();
    await ready();
    seedVolume(t.sim, 'new-one', 'analytics');
    await t.until(() => t.of('new-one').length === 1, 'the create');
    expect(t.of('new-one')[0]).toMatchObject({
      before: null,
      after: { ref: { backend: 'east', namespace: 'analytics', nativeId: 'new-one' }, complete: true },
    });
    const r = await fetch(`${t.sim.url}/v1/volume/csi/new-one?namespace=analytics`, {
      method: 'DELETE',
      headers: { 'x-nomad-token': MGMT },
    });
    expect(r.status).toBe(200);
    await t.until(() => t.of('new-one').length === 2, 'the delete');
    expect(t.of('new-one')[1]).toMatchObject({ before: { ref: { nativeId: 'new-one' } }, after: null });
    expect(t.watcher.volume(t.ref('new-one', 'analytics'))).toBeUndefined();
  });

  it('reads a volume once for a burst of events, with the service token only', async () => {
    t = await startWatch({ seed: (u) => seedVolume(u.sim, 'busy') });
    await ready();
    t.sim.clearRequests();
    // Three raft writes in one turn: three frames, one read.
    const a = t.sim.placeAllocation({ jobId: 'a', nodeId: NODE1, volumes: [{ volumeId: 'busy', mode: 'write' }] });
    t.sim.setAllocationStatus(a, { clientStatus: 'running' });
    await t.until(() => t.of('busy').length >= 1, 'the claim');
    await t.until(() => t.watcher.volume(t.ref('busy'))?.attachments[0]?.state === 'ATTACHED', 'ATTACHED');
    const reads = t.sim.requests().filter((q) => q.path === '/v1/volume/csi/busy');
    expect(reads.length).toBeLessThanOrEqual(2);
    expect(reads.every((q) => q.token === MGMT)).toBe(true);
  });

  it('resumes after a dropped stream without losing a change', async () => {
    t = await startWatch({ seed: (u) => seedVolume(u.sim, 'v1') });
    await ready();
    expect(t.sim.closeStreams()).toBe(1);
    // Changes while the watcher reconnects.
    seedVolume(t.sim, 'v2');
    const alloc = t.sim.placeAllocation({ jobId: 'j', nodeId: NODE1, volumes: [{ volumeId: 'v1', mode: 'write' }] });
    await t.until(() => streams() >= 2 && t.watcher.status().state === 'STREAMING', 'the reconnect');
    await t.until(
      () => t.of('v2').length === 1 && t.watcher.volume(t.ref('v1'))?.attachments[0]?.consumerId === alloc,
      'the missed changes',
    );
    const reconnect = t.sim
      .requests()
      .filter((q) => q.path === '/v1/event/stream')
      .at(-1)!;
    expect(Number(reconnect.query.index![0])).toBeGreaterThan(1);
    expect(reconnect.query.topic).toEqual(['CSIVolume', 'Allocation']);
    expect(reconnect.query.namespace).toEqual(['*']);
  });

  it('detects a gap past the event buffer and resyncs: the missed changes are emitted, deletions too', async () => {
    t = await startWatch({
      sim: { eventBufferSize: 2 },
      seed: (u) => ['a', 'b', 'c'].forEach((id) => seedVolume(u.sim, id)),
    });
    await ready();
    // The stream is down and refused for a while: more than the buffer's worth of changes.
    t.sim.failNext({ count: 2, status: 503, body: 'no leader', pathPrefix: '/v1/event/stream' });
    t.sim.closeStreams();
    const alloc = t.sim.placeAllocation({
      jobId: 'j',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'a', mode: 'write' }],
    });
    t.sim.setAllocationStatus(alloc, { clientStatus: 'running' });
    for (let i = 0; i < 5; i++) seedVolume(t.sim, `late-${i}`);
    await fetch(`${t.sim.url}/v1/volume/csi/c`, { method: 'DELETE', headers: { 'x-nomad-token': MGMT } });
    await t.until(() => t.watcher.status().state === 'STREAMING' && streams() >= 4, 'the resync');
    await t.until(() => t.of('c').some((d) => d.after === null), 'the deletion');
    for (let i = 0; i < 5; i++) expect(t.of(`late-${i}`)).toHaveLength(1);
    await t.until(() => t.watcher.volume(t.ref('a'))?.attachments[0]?.state === 'ATTACHED', 'the claim seen ATTACHED');
    expect(t.watcher.status().volumes).toBe(2 + 5);
  });

  it('reconnects when nothing, not even a heartbeat, arrives within the heartbeat timeout', async () => {
    t = await startWatch({ sim: { eventHeartbeatMs: 600_000 }, tuning: { heartbeatTimeoutMs: 300 } });
    await ready();
    await t.until(() => streams() >= 3, 'two reconnects');
    expect(t.statuses.some((s) => s.state === 'DEGRADED' && /heartbeat/.test(s.message ?? ''))).toBe(true);
    seedVolume(t.sim, 'still-seen');
    await t.until(() => t.of('still-seen').length === 1, 'a change after reconnects');
  });

  it('stops: no stream left open, state STOPPED', async () => {
    t = await startWatch();
    await ready();
    await t.watcher.stop();
    expect(t.watcher.status().state).toBe('STOPPED');
    expect(t.watcher.current).toBe(false);
    expect(t.sim.closeStreams()).toBe(0);
  });

  it('only calls paths on Nomad’s route table, with the service token', async () => {
    t = await startWatch({ seed: (u) => seedVolume(u.sim, 'v') });
    await ready();
    const alloc = t.sim.placeAllocation({ jobId: 'j', nodeId: NODE1, volumes: [{ volumeId: 'v', mode: 'read' }] });
    await t.until(() => t.watcher.volume(t.ref('v'))?.attachments.length === 1, 'the claim');
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete' });
    await t.until(
      () => t.of('v').some((d) => d.after?.attachments.length === 0 && d.before!.attachments.length === 1),
      'the release',
    );
    const allowed = [/^GET \/v1\/volumes$/, /^GET \/v1\/volume\/csi\/[^/]+$/, /^GET \/v1\/event\/stream$/];
    const log = t.sim.requests();
    expect(log.length).toBeGreaterThan(0);
    for (const q of log) {
      expect(allowed.some((re) => re.test(`${q.method} ${q.path}`))).toBe(true);
      expect(q.token).toBe(MGMT);
    }
  });
});
