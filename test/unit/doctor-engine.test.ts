/**
 * The doctor's engine (subscriptions/doctor/backend-doctor.ts) with a small diagnosis of the test's
 * own: a volume whose status is ERROR is a problem once seen for `graceMs`. What is checked here is
 * the engine's bookkeeping: incremental checks on deltas, full passes, ids, opened/updated/resolved,
 * the condition clock, and the running-operations index.
 */
import type { Diagnosis, Finding } from '../../adapters/contract/diagnosis';
import type { OperationRecord, Volume, VolumeRef } from '../../adapters/contract/model';
import { BackendDoctor, type ProblemChange } from '../../subscriptions/doctor/backend-doctor';
import { RunningOperations } from '../../subscriptions/doctor/running-operations';
import { encodeGlobalId } from '../../adapters/contract/ids';

const ref = (id: string): VolumeRef => ({ backend: 'b1', namespace: 'ns', nativeId: id });
const volume = (id: string, status: Volume['status']): Volume => ({
  __typename: 'Volume',
  ref: ref(id),
  name: id,
  status,
  backendStatus: status.toLowerCase(),
  sizeBytes: 1,
  createdAt: null,
  updatedAt: null,
  complete: true,
  attachments: [],
  details: { __typename: 'TestDetails' },
});

function testDiagnosis(graceMs: number, facts?: { orphans: string[] }): Diagnosis<{ orphans: string[] }> {
  const finding = (r: VolumeRef, subject: string, since: number): Finding => ({
    kind: 'ERROR_STATE',
    severity: 'CRITICAL',
    volume: r,
    subject,
    startedAt: new Date(since).toISOString(),
    summary: `volume ${r.nativeId} is in error`,
    evidence: {
      __typename: 'VolumeStatusEvidence',
      status: 'ERROR',
      backendStatus: 'error',
      updatedAt: null,
      since: new Date(since).toISOString(),
      sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
      thresholdMs: null,
    },
    remedies: [],
  });
  return {
    kinds: ['ERROR_STATE', 'ATTACHMENT_DRIFT'],
    ...(facts ? { readFacts: () => Promise.resolve(facts) } : {}),
    checkVolume(v, _f, ctx) {
      if (v.status !== 'ERROR' || ctx.operationRunning(v.ref)) return [];
      const since = ctx.firstSeen(v.ref, 'error');
      return ctx.now - since >= graceMs ? [finding(v.ref, 'error', since)] : [];
    },
    checkFacts(f, inView, ctx) {
      return f.orphans
        .map(ref)
        .filter((r) => !inView(r))
        .map((r) => ({ ...finding(r, 'orphan', ctx.now), kind: 'ATTACHMENT_DRIFT' as const }));
    },
  };
}

describe('the doctor engine', () => {
  let now = 1_000_000;
  let changes: ProblemChange[] = [];
  const running = new RunningOperations();
  const doctor = (d: Diagnosis<never> | Diagnosis<{ orphans: string[] }>): BackendDoctor =>
    new BackendDoctor(
      'b1',
      d,
      running,
      (c) => changes.push(...c),
      () => now,
    );
  beforeEach(() => {
    changes = [];
  });

  it('should open a problem on a full pass, keep its id and seenAt, and resolve it when a delta ends the condition', async () => {
    const d = doctor(testDiagnosis(0));
    let view = [volume('a', 'ERROR'), volume('b', 'AVAILABLE')];
    await d.pass(() => view, null);
    expect(changes.map((c) => [c.type, c.problem.volume.nativeId])).toEqual([['OPENED', 'a']]);
    const opened = changes[0]!.problem;
    expect(opened.id).toBe(
      encodeGlobalId({ kind: 'Problem', backend: 'b1', scope: 'ns', nativeId: 'a', subId: 'ERROR_STATE:error' }),
    );
    expect(d.ofVolume(ref('a')).map((p) => p.id)).toEqual([opened.id]);
    expect(d.ofVolume(ref('b'))).toEqual([]);
    now += 5_000;
    await d.pass(() => view, null);
    expect(changes).toHaveLength(1);
    expect(d.problems()[0]!.seenAt).toBe(opened.seenAt);
    view = [volume('a', 'AVAILABLE'), volume('b', 'AVAILABLE')];
    d.deltas([{ before: volume('a', 'ERROR'), after: view[0]!, observedAt: new Date(now).toISOString() }]);
    expect(changes.map((c) => c.type)).toEqual(['OPENED', 'RESOLVED']);
    expect(d.problems()).toEqual([]);
    expect(d.lastPass?.volumes).toBe(2);
  });

  it('should count a grace period from when the condition was first seen, and start it again after the condition ended', async () => {
    const d = doctor(testDiagnosis(10_000));
    const view = [volume('a', 'ERROR')];
    await d.pass(() => view, null);
    expect(changes).toEqual([]);
    now += 10_000;
    await d.pass(() => view, null);
    expect(changes.map((c) => c.type)).toEqual(['OPENED']);
    // Gone for one pass: forgotten; back again: a new grace period.
    await d.pass(() => [volume('a', 'AVAILABLE')], null);
    expect(changes.map((c) => c.type)).toEqual(['OPENED', 'RESOLVED']);
    now += 1_000;
    await d.pass(() => view, null);
    expect(changes).toHaveLength(2);
  });

  it("should not report a volume one of the gateway's operations is changing inside its deadline, and report it after", async () => {
    const d = doctor(testDiagnosis(0));
    const record = {
      id: 'op1',
      targetId: encodeGlobalId({ kind: 'Volume', backend: 'b1', scope: 'ns', nativeId: 'a' }),
      state: 'RUNNING',
      deadline: now + 60_000,
    } as OperationRecord;
    running.update(record);
    await d.pass(() => [volume('a', 'ERROR')], null);
    expect(changes).toEqual([]);
    now += 61_000;
    await d.pass(() => [volume('a', 'ERROR')], null);
    expect(changes.map((c) => c.type)).toEqual(['OPENED']);
    running.update({ ...record, state: 'SUCCEEDED' });
    expect(running.size).toBe(0);
  });

  it("should open what the facts show about volumes the view lacks, and resolve it when a pass's facts no longer show it", async () => {
    const facts = { orphans: ['x', 'a'] };
    const d = doctor(testDiagnosis(0, facts));
    await d.pass(() => [volume('a', 'AVAILABLE')], { credential: {} });
    expect(changes.map((c) => [c.type, c.problem.kind, c.problem.volume.nativeId])).toEqual([
      ['OPENED', 'ATTACHMENT_DRIFT', 'x'],
    ]);
    expect(d.ofVolume(ref('x'))).toHaveLength(1);
    // A delta on another volume leaves it alone.
    d.deltas([{ before: null, after: volume('c', 'AVAILABLE'), observedAt: '' }]);
    expect(changes).toHaveLength(1);
    facts.orphans = [];
    await d.pass(() => [volume('a', 'AVAILABLE')], { credential: {} });
    expect(changes.map((c) => c.type)).toEqual(['OPENED', 'RESOLVED']);
    expect(d.lastPass?.factsMs).toBeGreaterThanOrEqual(0);
  });

  it('should forget silently when cleared, and after a restore say only what changed since', async () => {
    const d = doctor(testDiagnosis(0));
    await d.pass(() => [volume('a', 'ERROR'), volume('b', 'ERROR')], null);
    const held = d.problems();
    const state = d.state();
    changes = [];
    d.clear();
    expect(changes).toEqual([]);
    expect(d.problems()).toEqual([]);
    expect(d.lastPass).toBeNull();
    // Another replica's doctor takes over what this one held: b still stands, a ended meanwhile.
    const next = doctor(testDiagnosis(0));
    next.restore(state);
    await next.pass(() => [volume('a', 'AVAILABLE'), volume('b', 'ERROR')], null);
    expect(changes.map((c) => [c.type, c.problem.volume.nativeId])).toEqual([['RESOLVED', 'a']]);
    expect(next.problems().map((p) => [p.volume.nativeId, p.seenAt])).toEqual([
      ['b', held.find((p) => p.volume.nativeId === 'b')!.seenAt],
    ]);
  });
});
