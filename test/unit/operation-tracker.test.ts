/**
 * The operation tracker on its own, with real timers: states, deadlines, transient and fatal
 * check errors, listeners and shutdown. (Against real backends: test/gateway/openstack-*.)
 */
import type { ChangeProgress, PendingChange } from '../../adapters/backend';
import { BackendUnavailableError, ForbiddenError } from '../../adapters/errors';
import { OperationTracker, ownerKey, type OperationRecord } from '../../subscriptions/operations';

const base = { kind: 'ATTACH_VOLUME' as const, backend: 'os', scope: 'p', targetId: 'vol', credential: { token: 'caller-token' } };

/** A change whose checks answer the given progressions in turn (the last one repeats). */
function scripted(steps: Array<ChangeProgress | Error>, timeoutMs?: number): PendingChange & { calls: number } {
  const c = {
    calls: 0,
    timeoutMs,
    check: async (): Promise<ChangeProgress> => {
      const s = steps[Math.min(c.calls++, steps.length - 1)]!;
      if (s instanceof Error) throw s;
      return s;
    },
  };
  return c;
}

async function settle(t: OperationTracker, id: string, ms = 3000): Promise<OperationRecord> {
  const end = Date.now() + ms;
  for (;;) {
    const r = (await t.get(id))!;
    if (['SUCCEEDED', 'FAILED', 'TIMED_OUT'].includes(r.state) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
}

describe('operation tracker', () => {
  let tracker: OperationTracker;
  const seen: Array<[string, string | null]> = [];
  beforeEach(() => {
    seen.length = 0;
    tracker = new OperationTracker({ pollMs: 5, maxPollMs: 10, onChange: (r, prev) => seen.push([r.state, prev]) });
  });
  afterEach(() => tracker.close());

  it('should start SUCCEEDED without polling when the backend finished synchronously', async () => {
    const r = await tracker.start({ ...base, pending: null });
    expect(r.state).toBe('SUCCEEDED');
    expect(tracker.active).toBe(0);
  });

  it('should go PENDING → RUNNING → SUCCEEDED and keep the backend status', async () => {
    const change = scripted([{ state: 'RUNNING', backendStatus: 'reserved' }, { state: 'RUNNING', backendStatus: 'attaching' }, { state: 'SUCCEEDED', backendStatus: 'in-use' }]);
    const r = await tracker.start({ ...base, pending: change });
    expect(r.state).toBe('PENDING');
    const done = await settle(tracker, r.id);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use', failureReason: null });
    expect(seen.map(([s]) => s)).toEqual(['PENDING', 'RUNNING', 'RUNNING', 'SUCCEEDED']);
    expect(tracker.active).toBe(0);
  });

  it('should fail with the reason the check gives', async () => {
    const r = await tracker.start({ ...base, pending: scripted([{ state: 'FAILED', reason: 'Cinder set the volume to error_extending', backendStatus: 'error_extending' }]) });
    expect(await settle(tracker, r.id)).toMatchObject({ state: 'FAILED', failureReason: 'Cinder set the volume to error_extending' });
  });

  it('should retry transient check errors and time out at the deadline with the last status', async () => {
    const change = scripted([{ state: 'RUNNING', backendStatus: 'detaching' }, new BackendUnavailableError('503')], 150);
    const r = await tracker.start({ ...base, pending: change });
    const done = await settle(tracker, r.id);
    expect(done.state).toBe('TIMED_OUT');
    expect(done.failureReason).toMatch(/not finished after 0 s; last backend status: detaching/);
    expect(change.calls).toBeGreaterThan(2);
  });

  it('should end on a non-retryable check error', async () => {
    const r = await tracker.start({ ...base, pending: scripted([new ForbiddenError('token no longer allowed')]) });
    expect(await settle(tracker, r.id)).toMatchObject({ state: 'FAILED', failureReason: 'token no longer allowed' });
  });

  it('should stop polling on close and keep the last state', async () => {
    const change = scripted([{ state: 'RUNNING', backendStatus: 'attaching' }]);
    const r = await tracker.start({ ...base, pending: change });
    await new Promise((res) => setTimeout(res, 40));
    await tracker.close();
    const calls = change.calls;
    await new Promise((res) => setTimeout(res, 40));
    expect(change.calls).toBe(calls);
    expect((await tracker.get(r.id))!.state).toBe('RUNNING');
  });

  it('should record who started it as a hash, never the token', async () => {
    const r = await tracker.start({ ...base, pending: null });
    expect(r.owner).toBe(ownerKey('os', { token: 'caller-token' }));
    expect(JSON.stringify(r)).not.toContain('caller-token');
  });
});
