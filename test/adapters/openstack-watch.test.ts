/**
 * The OpenStack watcher against the real simulator over HTTP: changes made through Cinder's and
 * Nova's APIs come out as deltas with the right before/after, deletion shows as absence, Nova's
 * lists add attaches in progress and failed detaches, the scope follows the service user's role,
 * and listing follows every page.
 */
import { changesOf } from '../../subscriptions/events/diff';

import {
  apiRequests,
  attachmentTo,
  createVolume,
  deleteVolume,
  deltasOf,
  listCalls,
  novaAttach,
  novaDetach,
  startWatchCloud,
  watch,
  type WatchCloud,
} from './openstack-watch-helpers';
import { until } from '../support/until';

const WITHIN = 15_000;

describe('OpenStack watcher: changes through the APIs become deltas', () => {
  let c: WatchCloud;
  beforeEach(async () => {
    // Slow enough transitions that every intermediate status is seen at the 30 ms fast interval.
    c = await startWatchCloud('admin', {
      delays: { createMs: 300, deleteMs: 300, attachMs: 400, attachCompleteMs: 400, detachMs: 400 },
    });
  });
  afterEach(() => c.close());

  it('should report create, attach (ATTACHING then ATTACHED), detach and delete with before and after', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 'app-1' });
    const r = watch(c);
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    expect(r.deltas).toEqual([]); // the first read is the baseline, not news

    // Slow interval is 60 s here: the gateway nudges the watcher when it accepts a change.
    const id = await createVolume(c, 'watched');
    r.w.nudge([{ backend: 'os', namespace: c.p.demo, nativeId: id }]);
    await until(
      () => deltasOf(r, id).some((d) => d.after?.status === 'AVAILABLE'),
      "deltasOf(r, id).some((d) => d.after?.status === 'AVAILABLE')",
      WITHIN,
    );
    const created = deltasOf(r, id);
    expect(created[0]).toMatchObject({
      before: null,
      after: {
        status: 'CREATING',
        backendStatus: 'creating',
        ref: { backend: 'os', namespace: c.p.demo, nativeId: id },
      },
    });
    expect(created.at(-1)).toMatchObject({ before: { status: 'CREATING' }, after: { status: 'AVAILABLE' } });
    expect(changesOf(created[0]!).map((x) => x.type)).toEqual(['CREATED']);
    expect(changesOf(created.at(-1)!).map((x) => x.type)).toEqual(['STATUS_CHANGED']);
    expect(new Date(created[0]!.observedAt).toISOString()).toBe(created[0]!.observedAt);

    // The gateway would name the server as pending: Nova's list then shows the attach in progress.
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [server] });
    await novaAttach(c, server, id);
    await until(
      () =>
        attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state === 'ATTACHED',
      "attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state === 'ATTACHED'",
      WITHIN,
    );
    const attach = deltasOf(r, id).slice(created.length);
    const states = attach.map((d) => `${d.after!.status}/${attachmentTo(d.after, server)?.state ?? '-'}`);
    expect(states).toContain('ATTACHING/ATTACHING');
    expect(states.at(-1)).toBe('IN_USE/ATTACHED');
    expect(states.indexOf('ATTACHING/ATTACHING')).toBeLessThan(states.length - 1);
    const types = attach.flatMap((d) => changesOf(d).map((x) => x.type));
    expect(types).toContain('ATTACHING');
    expect(types.at(-1)).toBe('ATTACHED');
    expect(attachmentTo(attach.at(-1)!.before, server)?.state).toBe('ATTACHING');

    const before = r.deltas.length;
    await novaDetach(c, server, id);
    await until(
      () => r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id })?.status === 'AVAILABLE',
      "r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id })?.status === 'AVAILABLE'",
      WITHIN,
    );
    const detach = r.deltas.slice(before);
    expect(detach[0]).toMatchObject({ before: { status: 'IN_USE' }, after: { status: 'DETACHING' } });
    expect(attachmentTo(detach[0]!.after, server)?.state).toBe('DETACHING');
    expect(detach.at(-1)).toMatchObject({
      before: { status: 'DETACHING' },
      after: { status: 'AVAILABLE', attachments: [] },
    });
    // The volume's `detaching` is folded into the attachment's DETACHING (one event per transition).
    expect(detach.flatMap((d) => changesOf(d).map((x) => x.type))).toEqual(['DETACHING', 'STATUS_CHANGED', 'DETACHED']);

    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    const beforeDelete = r.deltas.length;
    await deleteVolume(c, id);
    r.w.nudge([{ backend: 'os', namespace: c.p.demo, nativeId: id }]);
    await until(
      () => r.deltas.slice(beforeDelete).some((d) => d.after === null),
      'r.deltas.slice(beforeDelete).some((d) => d.after === null)',
      WITHIN,
    );
    const gone = r.deltas.slice(beforeDelete);
    expect(gone[0]).toMatchObject({ before: { status: 'AVAILABLE' }, after: { status: 'DELETING' } });
    expect(gone.at(-1)).toMatchObject({ before: { status: 'DELETING' }, after: null });
    expect(changesOf(gone.at(-1)!).map((x) => x.type)).toEqual(['DELETED']);
    expect(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id })).toBeUndefined();
    await r.w.stop();
  });

  it('should show a detach that failed in nova-compute as an ERROR attachment (Nova still lists it, Cinder let go)', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 'db-1' });
    const id = c.sim.seedVolume({ project: 'demo', name: 'data' });
    c.sim.attachNow(server, id);
    const r = watch(c, { slowMs: 150 });
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    expect(attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state).toBe(
      'ATTACHED',
    );

    c.sim.failNextDetach(id);
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [server] });
    await novaDetach(c, server, id);
    await until(
      () => attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state === 'ERROR',
      "attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state === 'ERROR'",
      WITHIN,
    );
    const v = r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id })!;
    expect(v.status).toBe('AVAILABLE');
    expect(attachmentTo(v, server)?.stateReason).toMatch(/Nova and Cinder disagree/);
    const types = r.deltas.flatMap((d) => changesOf(d).map((x) => x.type));
    expect(types).toContain('ATTACHMENT_ERROR');
    expect(types).not.toContain('DETACHED');

    // The operation ends; the server stays followed (Nova still says more than Cinder) and is
    // re-read once per slow interval, so the ERROR stays instead of turning into a false DETACHED.
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    const novaReads = (): number =>
      c.sim
        .requests()
        .filter(
          (e) =>
            e.service === 'nova' && e.method === 'GET' && e.path.endsWith(`/servers/${server}/os-volume_attachments`),
        ).length;
    const n = novaReads();
    await until(() => novaReads() >= n + 2, 'novaReads() >= n + 2', WITHIN);
    expect(attachmentTo(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id }), server)?.state).toBe('ERROR');
    await r.w.stop();
  });
});

describe('OpenStack watcher: scope and paging', () => {
  it('should watch every project with all_tenants when the service user is an admin', async () => {
    const c = await startWatchCloud('admin');
    try {
      const mine = c.sim.seedVolume({ project: 'demo', name: 'd' });
      const theirs = c.sim.seedVolume({ project: 'other', name: 'o' });
      const r = watch(c);
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);
      expect(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: mine })?.name).toBe('d');
      expect(r.w.volume({ backend: 'os', namespace: c.p.other, nativeId: theirs })?.name).toBe('o');
      // A ref naming the wrong project does not find it.
      expect(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: theirs })).toBeUndefined();
      expect([r.w.covers(c.p.demo), r.w.covers(c.p.other), r.w.covers('anything')]).toEqual([true, true, true]);
      expect(listCalls(c).every((e) => e.params.all_tenants?.[0] === '1')).toBe(true);
      expect(r.w.status()).toMatchObject({
        backend: 'os',
        state: 'POLLING',
        source: 'POLLING',
        volumes: 2,
        message: expect.stringMatching(/every project/),
      });
      await r.w.stop();
    } finally {
      await c.close();
    }
  });

  it('should watch only its own project when the service user is not an admin, and say which', async () => {
    const c = await startWatchCloud('member');
    try {
      const mine = c.sim.seedVolume({ project: 'demo', name: 'd' });
      const theirs = c.sim.seedVolume({ project: 'other', name: 'o' });
      const r = watch(c);
      expect(r.w.covers(c.p.demo)).toBe(false); // nothing read yet
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);
      expect(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: mine })?.name).toBe('d');
      expect(r.w.volume({ backend: 'os', namespace: c.p.other, nativeId: theirs })).toBeUndefined();
      expect([r.w.covers(c.p.demo), r.w.covers(c.p.other)]).toEqual([true, false]);
      expect(listCalls(c).some((e) => 'all_tenants' in e.params)).toBe(false);
      expect(r.w.status().message).toBe(`watching project ${c.p.demo} only (service user is not an admin)`);
      await r.w.stop();
    } finally {
      await c.close();
    }
  });

  it('should follow every page (limit/marker) and report a volume gone from the list as deleted', async () => {
    const c = await startWatchCloud('admin');
    try {
      const ids = Array.from({ length: 8 }, (_, i) =>
        c.sim.seedVolume({ project: i % 2 ? 'demo' : 'other', name: `v${i}` }),
      );
      const r = watch(c, { pageSize: 3 });
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);
      expect(r.w.status().volumes).toBe(8);
      const first = listCalls(c).slice(0, 3);
      expect(first.map((e) => e.params.limit?.[0])).toEqual(['3', '3', '3']);
      expect(first[0]!.params.marker).toBeUndefined();
      expect(first[1]!.params.marker?.[0]).toBe(ids[2]);
      expect(first[2]!.params.marker?.[0]).toBe(ids[5]);

      // Deleted out of band (no transitional status seen): absence is the deletion.
      await deleteVolume(c, ids[3]!);
      r.w.nudge([{ backend: 'os', namespace: c.p.demo, nativeId: ids[3]! }]);
      await until(() => r.deltas.some((d) => d.after === null), 'r.deltas.some((d) => d.after === null)', WITHIN);
      expect(r.deltas.filter((d) => d.after === null).map((d) => d.before!.ref.nativeId)).toEqual([ids[3]]);
      expect(r.w.status().volumes).toBe(7);
      await r.w.stop();
    } finally {
      await c.close();
    }
  });

  it('should report every volume as created on the first read only when asked to', async () => {
    const c = await startWatchCloud('member');
    try {
      c.sim.seedVolume({ project: 'demo', name: 'a' });
      c.sim.seedVolume({ project: 'demo', name: 'b' });
      const r = watch(c, { reportInitial: true });
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);
      expect(r.deltas.map((d) => [d.before, d.after?.name])).toEqual([
        [null, 'a'],
        [null, 'b'],
      ]);
      await r.w.stop();
    } finally {
      await c.close();
    }
  });

  it('should refuse to watch without a service credential, and send nothing', async () => {
    const c = await startWatchCloud(null);
    try {
      const w = c.backend.createWatcher({ onDeltas: () => undefined });
      expect(w).toEqual({ unavailable: expect.stringMatching(/no service credential/) });
      expect(apiRequests(c)).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
