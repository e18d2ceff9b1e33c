/**
 * The memory backend's live path and delayed changes: mutations answer at once with the volume in
 * its in-between status and a completion rule; the change applies after the configured delay
 * (checkChange RUNNING → SUCCEEDED), and the watcher reports every step as before/after deltas
 * that the gateway's diff turns into typed changes. A reset ends running changes and is reported
 * like any other change.
 */
import type { CallOptions } from '../../adapters/contract/call-options';
import type { VolumeRef } from '../../adapters/contract/model';
import type { VolumeDelta, WatcherStatus } from '../../adapters/contract/watch';
import { MemoryBackend } from '../../adapters/memory/backend';
import { memoryDetails } from '../../adapters/memory/model';
import { changesOf } from '../../subscriptions/events/diff';
import { until } from '../support/until';

const ADMIN: CallOptions = { credential: { token: 'lab-admin' } };
const ref = (namespace: string, nativeId: string): VolumeRef => ({ backend: 'lab', namespace, nativeId });
const DELAY = 300;

function watched(b: MemoryBackend) {
  const deltas: VolumeDelta[] = [];
  const states: WatcherStatus['state'][] = [];
  const w = b.createWatcher({ onDeltas: (d) => deltas.push(...d), onStatus: (s) => states.push(s.state) });
  w.start();
  const of = (id: string) => deltas.filter((d) => (d.after ?? d.before)!.ref.nativeId === id);
  return { w, deltas, states, of };
}

describe('memory backend: changes finish after the delay and the watcher reports each step', () => {
  let b: MemoryBackend;
  beforeEach(() => {
    b = new MemoryBackend({ backend: 'lab', operationDelayMs: DELAY });
  });
  afterEach(() => b.close());

  it('should be current at once and report nothing until something changes; reads do not wait', async () => {
    const r = watched(b);
    expect(r.w.current).toBe(true);
    expect(r.w.status()).toMatchObject({
      backend: 'lab',
      state: 'STREAMING',
      source: 'EVENT_STREAM',
      volumes: 4,
      lagMs: 0,
    });
    expect(r.w.volume(ref('default', 'pg-data'))?.name).toBe('postgres data');
    const started = performance.now();
    await b.getVolume(ref('default', 'pg-data'), ADMIN);
    expect(performance.now() - started).toBeLessThan(DELAY);
    expect(r.deltas).toEqual([]);
    await r.w.stop();
    expect(r.states).toEqual(['STREAMING', 'STOPPED']);
  });

  it('should create: CREATING with a rule, RUNNING until the delay has passed, then AVAILABLE and SUCCEEDED', async () => {
    const r = watched(b);
    const accepted = await b.createVolume({ namespace: 'dev', nativeId: 'slow', name: 'slow' }, ADMIN);
    expect(accepted.pending?.rule).toMatchObject({ name: 'memoryChange' });
    expect((await b.getVolume(ref('dev', 'slow'), ADMIN))!.status).toBe('CREATING');
    expect((await b.checkChange(accepted.pending!.rule)).progress.state).toBe('RUNNING');
    await until(
      async () => (await b.checkChange(accepted.pending!.rule)).progress.state === 'SUCCEEDED',
      'the create to finish',
    );
    expect((await b.getVolume(ref('dev', 'slow'), ADMIN))!.status).toBe('AVAILABLE');
    await until(() => r.of('slow').length === 2, 'two deltas');
    const [first, second] = r.of('slow');
    expect(first).toMatchObject({ before: null, after: { status: 'CREATING' } });
    expect(second).toMatchObject({ before: { status: 'CREATING' }, after: { status: 'AVAILABLE' } });
    expect(changesOf(first!).map((c) => c.type)).toEqual(['CREATED']);
    expect(changesOf(second!).map((c) => c.type)).toEqual(['STATUS_CHANGED']);
  });

  it('should attach (ATTACHING, then ATTACHED) and detach (DETACHING, then gone), each a delta', async () => {
    const r = watched(b);
    const v = ref('default', 'scratch');
    const att = await b.attachVolume(v, { kind: 'host', connector: { host: 'web-9' } }, ADMIN);
    expect(att.result).toMatchObject({
      state: 'ATTACHING',
      consumer: { __typename: 'VolumeHostConsumer', hostName: 'web-9' },
    });
    await until(
      async () => (await b.checkChange(att.pending!.rule)).progress.state === 'SUCCEEDED',
      'the attach to finish',
    );
    const det = await b.detachVolume(v, { kind: 'hostAttachment', attachmentId: att.result!.consumerId }, ADMIN);
    await until(
      async () => (await b.checkChange(det.pending!.rule)).progress.state === 'SUCCEEDED',
      'the detach to finish',
    );
    await until(() => r.of('scratch').length === 4, 'four deltas');
    const steps = r.of('scratch').map((d) => [d.after!.status, d.after!.attachments.map((a) => a.state)]);
    expect(steps).toEqual([
      ['ATTACHING', ['ATTACHING']],
      ['IN_USE', ['ATTACHED']],
      ['DETACHING', ['DETACHING']],
      ['AVAILABLE', []],
    ]);
    const types = r.of('scratch').flatMap((d) => changesOf(d).map((c) => c.type));
    expect(types).toEqual(expect.arrayContaining(['ATTACHING', 'ATTACHED', 'DETACHING', 'DETACHED']));
  });

  it('should extend, snapshot and delete after the delay, the deletion reported as absence', async () => {
    const r = watched(b);
    const v = ref('dev', 'dev-cache');
    const ext = await b.extendVolume(v, 8 * 1024 ** 3, ADMIN);
    await expect(b.attachVolume(v, { kind: 'host', connector: { host: 'h' } }, ADMIN)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await until(async () => (await b.checkChange(ext.pending!.rule)).progress.state === 'SUCCEEDED', 'the extend');
    const snap = await b.createSnapshot({ volume: v, name: 'before delete' }, ADMIN);
    expect(snap.result.ready).toBe(false);
    await until(async () => (await b.checkChange(snap.pending!.rule)).progress.state === 'SUCCEEDED', 'the snapshot');
    expect((await b.getSnapshot({ backend: 'lab', scope: 'dev', nativeId: snap.result.nativeId }, ADMIN))!.ready).toBe(
      true,
    );
    const del = await b.deleteVolume(v, { own: { cascade: true } }, ADMIN);
    await until(async () => (await b.checkChange(del.pending!.rule)).progress.state === 'SUCCEEDED', 'the delete');
    await until(() => r.of('dev-cache').some((d) => d.after === null), 'the deletion');
    expect(
      r
        .of('dev-cache')
        .map((d) => d.after && [d.after.status, d.after.sizeBytes, memoryDetails(d.after.details)?.snapshotCount]),
    ).toEqual([
      ['EXTENDING', 5 * 1024 ** 3, 0],
      ['AVAILABLE', 8 * 1024 ** 3, 0],
      ['AVAILABLE', 8 * 1024 ** 3, 1],
      ['DELETING', 8 * 1024 ** 3, 1],
      ['DELETING', 8 * 1024 ** 3, 0],
      null,
    ]);
  });

  it('should end running changes as FAILED on reset and report every volume the reset changed', async () => {
    const r = watched(b);
    const accepted = await b.createVolume({ namespace: 'dev', nativeId: 'doomed', name: 'doomed' }, ADMIN);
    await b.updateVolume(ref('default', 'scratch'), { name: 'renamed' }, ADMIN);
    await until(() => r.deltas.length === 2, 'two deltas');
    b.reset();
    expect(await b.checkChange(accepted.pending!.rule)).toMatchObject({
      progress: { state: 'FAILED', reason: 'the data were reset' },
    });
    await until(() => r.deltas.length === 4, 'the reset deltas');
    expect(r.deltas.slice(2).map((d) => [d.before?.name ?? null, d.after?.name ?? null])).toEqual(
      expect.arrayContaining([
        ['renamed', 'scratch'],
        ['doomed', null],
      ]),
    );
    expect(await b.getVolume(ref('dev', 'doomed'), ADMIN)).toBeNull();
    await new Promise((res) => setTimeout(res, DELAY * 2));
    expect(await b.getVolume(ref('dev', 'doomed'), ADMIN)).toBeNull(); // the abandoned create never lands
  });

  it('should answer an unknown change as FAILED (a restart loses running changes)', async () => {
    const other = new MemoryBackend({ backend: 'lab', operationDelayMs: DELAY });
    const accepted = await other.createVolume({ namespace: 'dev', name: 'x' }, ADMIN);
    expect((await b.checkChange(accepted.pending!.rule)).progress.state).toBe('FAILED');
    await other.close();
  });
});
