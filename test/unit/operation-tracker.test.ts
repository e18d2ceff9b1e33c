/**
 * The operation tracker on its own, with real timers: states, deadlines, the rule's `seen` facts
 * kept between checks and stored with the record, transient and fatal check errors, listeners
 * and shutdown. The backend here answers scripted checks; the real OpenStack backend driving the
 * tracker is in test/adapters/openstack-operations.test.ts.
 */
import type { CallOptions } from '../../adapters/contract/call-options';
import type { ChangeCheck, CompletionRule, TrackedChanges } from '../../adapters/contract/completion';
import { BackendUnavailableError, ForbiddenError } from '../../adapters/contract/errors';
import { OperationTracker, ownerKey } from '../../subscriptions/operations';
import type { OperationRecord } from '../../adapters/contract/model';
import { volumeGlobalId } from '../../subscriptions/events/diff';
import { isTerminal, settle } from '../support/until';

const base = {
  kind: 'ATTACH_VOLUME' as const,
  backend: 'os',
  scope: 'p',
  targetId: 'vol',
  credential: { token: 'caller-token' },
};
const rule = (): CompletionRule => ({
  name: 'serverAttach',
  params: { volumeId: 'v', serverId: 's', novaRequestId: 'req-1' },
  seen: {},
});

/** A backend whose checks answer the given steps in turn (the last one repeats), recording what it was given. */
class Scripted implements TrackedChanges {
  readonly rules: CompletionRule[] = [];
  readonly options: CallOptions[] = [];
  constructor(private readonly steps: Array<ChangeCheck | Error>) {}
  get calls(): number {
    return this.rules.length;
  }
  async checkChange(r: CompletionRule, o: CallOptions): Promise<ChangeCheck> {
    this.rules.push(structuredClone(r));
    this.options.push(o);
    const s = this.steps[Math.min(this.rules.length - 1, this.steps.length - 1)]!;
    if (s instanceof Error) throw s;
    return s;
  }
}

const step = (progress: ChangeCheck['progress'], seen: ChangeCheck['seen'] = {}): ChangeCheck => ({ progress, seen });

/** Reads operation `id` until it is terminal (at most `ms`); the record as last read. */
const settleOp = (t: OperationTracker, id: string, ms = 3000): Promise<OperationRecord> =>
  settle(async () => (await t.get(id))!, isTerminal, ms, 10);

describe('operation tracker', () => {
  let tracker: OperationTracker;
  let backend: Scripted;
  const seen: Array<[string, string | null]> = [];
  const start = (steps: Array<ChangeCheck | Error>, timeoutMs?: number): Promise<OperationRecord> => {
    backend = new Scripted(steps);
    return tracker.start({ ...base, pending: { rule: rule(), timeoutMs } });
  };
  beforeEach(() => {
    seen.length = 0;
    tracker = new OperationTracker({
      changes: (id) => (id === 'os' ? backend : undefined),
      pollMs: 5,
      maxPollMs: 10,
      onChange: (r, prev) => seen.push([r.state, prev]),
    });
  });
  afterEach(() => tracker.close());

  it('should start SUCCEEDED without a rule or polling when the backend finished synchronously', async () => {
    const r = await tracker.start({ ...base, pending: null });
    expect(r.state).toBe('SUCCEEDED');
    expect(r.rule).toBeUndefined();
    expect(tracker.active).toBe(0);
  });

  it('should go PENDING → RUNNING → SUCCEEDED and keep the backend status', async () => {
    const r = await start([
      step({ state: 'RUNNING', backendStatus: 'reserved' }),
      step({ state: 'RUNNING', backendStatus: 'attaching' }),
      step({ state: 'SUCCEEDED', backendStatus: 'in-use' }),
    ]);
    expect(r).toMatchObject({ state: 'PENDING', rule: rule() });
    const done = await settleOp(tracker, r.id);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use', failureReason: null });
    expect(seen.map(([s]) => s)).toEqual(['PENDING', 'RUNNING', 'RUNNING', 'SUCCEEDED']);
    expect(tracker.active).toBe(0);
  });

  it('should start RUNNING with the status and facts the backend saw when it answered (started)', async () => {
    backend = new Scripted([step({ state: 'SUCCEEDED', backendStatus: 'freed' }, { claims: '["a"]' })]);
    const started = { ...rule(), seen: { claims: '["a"]' } };
    const r = await tracker.start({ ...base, pending: { rule: started, started: { backendStatus: 'held' } } });
    expect(r).toMatchObject({ state: 'RUNNING', backendStatus: 'held', rule: started });
    expect(await settleOp(tracker, r.id)).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'freed' });
    expect(backend.rules.map((x) => x.seen)).toEqual([{ claims: '["a"]' }]);
    expect(seen).toEqual([
      ['RUNNING', null],
      ['SUCCEEDED', 'RUNNING'],
    ]);
  });

  it('should hand the rule back with the facts the last check kept, and store them with the record', async () => {
    const r = await start([
      step({ state: 'RUNNING', backendStatus: 'reserved' }),
      step({ state: 'RUNNING', backendStatus: 'reserved' }, { started: true }),
      step({ state: 'RUNNING', backendStatus: 'reserved' }, { started: true }),
      step({ state: 'SUCCEEDED', backendStatus: 'in-use' }, { started: true }),
    ]);
    const done = await settleOp(tracker, r.id);
    expect(backend.rules.map((x) => x.seen)).toEqual([{}, {}, { started: true }, { started: true }]);
    expect(backend.rules.every((x) => x.name === 'serverAttach' && x.params.novaRequestId === 'req-1')).toBe(true);
    expect(done.rule).toEqual({ ...rule(), seen: { started: true } });
    // A change of the facts alone is stored too (second RUNNING: same state and status); a check
    // that changes nothing is not (the third).
    expect(seen.map(([s]) => s)).toEqual(['PENDING', 'RUNNING', 'RUNNING', 'SUCCEEDED']);
  });

  it('should check with the caller credential and request id, which never reach the record', async () => {
    backend = new Scripted([step({ state: 'SUCCEEDED', backendStatus: 'in-use' })]);
    const r = await tracker.start({ ...base, requestId: 'req-caller', pending: { rule: rule() } });
    const done = await settleOp(tracker, r.id);
    expect(backend.options[0]).toMatchObject({ credential: { token: 'caller-token' }, requestId: 'req-caller' });
    expect(done.owner).toBe(ownerKey('os', { token: 'caller-token' }));
    expect(JSON.stringify(done)).not.toContain('caller-token');
    // Records are JSON (the Redis store keeps them as such): nothing is lost on the way.
    expect(JSON.parse(JSON.stringify(done))).toEqual(done);
  });

  it('should fail with the reason the check gives', async () => {
    const r = await start([
      step({ state: 'FAILED', reason: 'Cinder set the volume to error_extending', backendStatus: 'error_extending' }),
    ]);
    expect(await settleOp(tracker, r.id)).toMatchObject({
      state: 'FAILED',
      failureReason: 'Cinder set the volume to error_extending',
      backendStatus: 'error_extending',
    });
  });

  it('should retry transient check errors and time out at the deadline with the last status', async () => {
    const r = await start(
      [step({ state: 'RUNNING', backendStatus: 'detaching' }), new BackendUnavailableError('503')],
      150,
    );
    const done = await settleOp(tracker, r.id);
    expect(done.state).toBe('TIMED_OUT');
    expect(done.failureReason).toMatch(/not finished after 0 s; last backend status: detaching/);
    expect(backend.calls).toBeGreaterThan(2);
  });

  it('should end on a non-retryable check error', async () => {
    const r = await start([new ForbiddenError('token no longer allowed')]);
    expect(await settleOp(tracker, r.id)).toMatchObject({ state: 'FAILED', failureReason: 'token no longer allowed' });
  });

  it('should fail an operation whose backend is no longer configured', async () => {
    backend = new Scripted([step({ state: 'SUCCEEDED' })]);
    const r = await tracker.start({ ...base, backend: 'gone', pending: { rule: rule() } });
    expect(await settleOp(tracker, r.id)).toMatchObject({
      state: 'FAILED',
      failureReason: 'backend "gone" is not configured to check this change any more',
    });
    expect(backend.calls).toBe(0);
  });

  it('should stop polling on close and keep the last state', async () => {
    const r = await start([step({ state: 'RUNNING', backendStatus: 'attaching' })]);
    await new Promise((res) => setTimeout(res, 40));
    await tracker.close();
    const calls = backend.calls;
    await new Promise((res) => setTimeout(res, 40));
    expect(backend.calls).toBe(calls);
    expect((await tracker.get(r.id))!.state).toBe('RUNNING');
  });
});

describe('operation tracker, watched: observe resolves once the operations concerned are checked and saved', () => {
  const volume = {
    __typename: 'Volume',
    ref: { backend: 'os', namespace: 'p', nativeId: 'v1' },
  } as unknown as import('../../adapters/contract/model').Volume;
  const target = volumeGlobalId(volume);

  it('should resolve after the check started by the news, also when a check was already running (that one may predate the news)', async () => {
    let calls = 0;
    const slow: TrackedChanges = {
      async checkChange() {
        calls++;
        await new Promise((r) => setTimeout(r, 50));
        return calls < 2
          ? step({ state: 'RUNNING', backendStatus: 'attaching' })
          : step({ state: 'SUCCEEDED', backendStatus: 'in-use' });
      },
    };
    const t = new OperationTracker({
      changes: () => slow,
      watchers: { serviceCredential: () => async () => ({ token: 'service' }) },
      watchedCheckMs: 60_000,
    });
    try {
      const r = await t.start({ ...base, targetId: target, pending: { rule: rule() } });
      expect(t.observe('os', [])).toBeUndefined();
      // The first news starts a check; the second arrives while it runs and waits for the one after it.
      const first = t.observe('os', [{ before: null, after: volume, observedAt: '' }])!;
      const second = t.observe('os', [{ before: volume, after: volume, observedAt: '' }])!;
      await first;
      expect((await t.get(r.id))!).toMatchObject({ state: 'RUNNING', backendStatus: 'attaching' });
      await second;
      expect(calls).toBe(2);
      expect((await t.get(r.id))!).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use' });
    } finally {
      await t.close();
    }
  });

  it('should check a polled operation (no watcher covered it when it started) when a watcher reports its target, ahead of its next poll', async () => {
    const checks: string[] = [];
    const backend: TrackedChanges = {
      async checkChange(_r, o) {
        checks.push(o.credential.token ?? '');
        return step({ state: 'SUCCEEDED', backendStatus: 'in-use' });
      },
    };
    const t = new OperationTracker({ changes: () => backend, pollMs: 60_000, maxPollMs: 60_000 });
    try {
      const r = await t.start({ ...base, targetId: target, pending: { rule: rule() } });
      await t.observe('os', [{ before: null, after: volume, observedAt: '' }]);
      expect(checks).toEqual(['caller-token']);
      expect((await t.get(r.id))!.state).toBe('SUCCEEDED');
    } finally {
      await t.close();
    }
  });
});
