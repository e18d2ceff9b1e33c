/**
 * Watched operations: when a watcher keeps the backend current, the tracker checks an operation's
 * rule with the gateway's service credential each time the watcher reports a change of the target,
 * and not otherwise (until a slow safety check). The caller's credential is not used after the
 * mutation: an operation whose caller's token expired still completes. Real OpenStack backend and
 * simulator; the deltas are the backend's own reads.
 */
import type { VolumeRef } from '../../adapters/contract/model';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { OperationTracker } from '../../subscriptions/operations';
import type { OperationRecord } from '../../adapters/contract/model';
import { sleep } from '../simulators/openstack-helpers';
import { startAdapterCloud, type AdapterCloud } from './openstack-helpers';
import { until } from '../support/until';

let c: AdapterCloud;
let tracker: OperationTracker;
let service: string;
const ref = (nativeId: string): VolumeRef => ({ backend: 'os', namespace: c.p.demo, nativeId });
const gid = (nativeId: string): string => encodeGlobalId({ kind: 'Volume', backend: 'os', scope: c.p.demo, nativeId });

beforeEach(async () => {
  c = await startAdapterCloud();
  service = c.sim.issueToken({ user: 'admin', project: 'demo' });
  tracker = new OperationTracker({
    changes: (id) => (id === 'os' ? c.backend.trackedChanges : undefined),
    watchers: { serviceCredential: (backend) => (backend === 'os' ? async () => ({ token: service }) : undefined) },
    watchedCheckMs: 60_000,
  });
});
afterEach(async () => {
  await tracker.close();
  await c.close();
});

/** What the watcher would report: the volume before and as it is now, read with the service token. */
async function observeNow(nativeId: string, before: Awaited<ReturnType<typeof c.backend.getVolume>>): Promise<void> {
  const after = await c.backend.getVolume(ref(nativeId), { credential: { token: service } });
  await tracker.observe('os', [{ before, after, observedAt: new Date().toISOString() }]);
}

const state = async (id: string): Promise<OperationRecord> => (await tracker.get(id))!;

describe('watched operations', () => {
  it('should check only when the watcher reports the target, with the service credential, and finish after the caller token expired', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's' });
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    const caller = c.sim.issueToken({ user: 'demo', project: 'demo' });
    const before = await c.backend.getVolume(ref(vol), { credential: { token: service } });
    const accepted = await c.backend.attachVolume(
      ref(vol),
      { kind: 'server', serverId: server },
      { credential: { token: caller } },
    );
    c.sim.expireToken(caller);
    const op = await tracker.start({
      kind: 'ATTACH_VOLUME',
      backend: 'os',
      scope: c.p.demo,
      targetId: gid(vol),
      credential: { token: caller },
      pending: accepted.pending,
    });
    expect(tracker.pendingTargets('os')).toEqual([gid(vol)]);

    // Let the attach finish on the backend; nothing checks it until the watcher says so.
    await until(
      async () => (await c.backend.getVolume(ref(vol), { credential: { token: service } }))?.status === 'IN_USE',
      "(await c.backend.getVolume(ref(vol), { credential: { token: service } }))?.status === 'IN_USE'",
      5000,
    );
    c.sim.clearRequests();
    await sleep(300);
    expect(c.sim.requests()).toEqual([]);
    expect((await state(op.id)).state).toBe('PENDING');

    // A change of another volume does not check it either.
    const other = c.sim.seedVolume({ project: 'demo', name: 'w' });
    await tracker.observe('os', [
      {
        before: null,
        after: await c.backend.getVolume(ref(other), { credential: { token: service } }),
        observedAt: new Date().toISOString(),
      },
    ]);
    await sleep(200);
    expect((await state(op.id)).state).toBe('PENDING');

    await observeNow(vol, before);
    await until(
      async () => (await state(op.id)).state === 'SUCCEEDED',
      "(await state(op.id)).state === 'SUCCEEDED'",
      5000,
    );
    expect(await state(op.id)).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use' });
    expect(tracker.pendingTargets('os')).toEqual([]);
    expect(JSON.stringify(await state(op.id))).not.toContain(caller);
  });

  it('should still end by the safety check when the watcher reports nothing', async () => {
    await tracker.close();
    tracker = new OperationTracker({
      changes: (id) => (id === 'os' ? c.backend.trackedChanges : undefined),
      watchers: { serviceCredential: () => async () => ({ token: service }) },
      watchedCheckMs: 100,
    });
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    const accepted = await c.backend.extendVolume(ref(vol), 2 * 1024 ** 3, c.as.demo);
    const op = await tracker.start({
      kind: 'EXTEND_VOLUME',
      backend: 'os',
      scope: c.p.demo,
      targetId: gid(vol),
      credential: c.as.demo.credential,
      pending: accepted.pending,
    });
    await until(
      async () => (await state(op.id)).state === 'SUCCEEDED',
      "(await state(op.id)).state === 'SUCCEEDED'",
      5000,
    );
  });
});
