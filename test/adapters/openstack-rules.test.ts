/**
 * The OpenStack completion rules as data: every rule survives JSON (records go to Redis), and the
 * evaluation is a pure function of the rule and an observation — so the cases a simulator run
 * reaches only by timing (a rollback seen after the attach was under way, a detach rolled back,
 * a status word this gateway does not know) are pinned here, observation by observation.
 */
import type { CompletionRule, RuleValue } from '../../adapters/contract/completion';
import type { VolumeFacts } from '../../adapters/openstack/cinder/results';
import { evaluate, ruleSpec, rules, wantsMessages, type Observation } from '../../adapters/openstack/completion/rules';

const V = 'd0000000-0000-4000-8000-000000000001';
const S = 'a0000000-0000-4000-8000-000000000001';
const vol = (over: Partial<VolumeFacts> = {}): VolumeFacts => ({
  status: 'AVAILABLE',
  backendStatus: 'available',
  sizeGiB: 1,
  migration: null,
  serverIds: [],
  attachmentIds: [],
  ...over,
});

/** Evaluates a sequence of observations the way the tracker does: seen carried, rule through JSON. */
function run(rule: CompletionRule, observations: Observation[]): Array<ReturnType<typeof evaluate>['progress']> {
  let r = rule;
  return observations.map((o) => {
    const c = evaluate(r, o);
    r = JSON.parse(JSON.stringify({ ...r, seen: c.seen })) as CompletionRule;
    return c.progress;
  });
}

describe('OpenStack completion rules', () => {
  it('should build every rule from JSON values only, with nothing seen yet, and survive a JSON round trip', () => {
    const all = [
      rules.volumeCreate(V, 'req-1'),
      rules.volumeGone(V, null),
      rules.volumeExtend(V, 3, 'req-1'),
      rules.action({ name: 'volumeSettles', leaves: 'UPLOADING' }, V, 'req-1'),
      rules.action({ name: 'volumeMigrate' }, V, 'req-1'),
      rules.action({ name: 'volumeGone' }, V, 'req-1'),
      rules.snapshotCreate(V, 'req-1'),
      rules.snapshotDelete(V, 'req-1'),
      rules.hostAttach(V, S),
      rules.hostDetach(V, S),
      rules.serverAttach(V, S, 'req-2'),
      rules.serverDetach(V, S, null),
      rules.serverAttachmentUpdate(S, V, V.replace('1', '2'), 'req-3'),
    ];
    const scalar = (v: RuleValue): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);
    for (const r of all) {
      expect(JSON.parse(JSON.stringify(r))).toEqual(r);
      expect(Object.values(r.params).every(scalar)).toBe(true);
      expect(r.seen).toEqual({});
      expect(ruleSpec(r.name)).toBeDefined();
    }
  });

  it('should fail an attach that returns to available only after it was seen under way', () => {
    const r = rules.serverAttach(V, S, 'req-2');
    // Nova (2.101+) may reserve after answering: `available` first is not a rollback.
    expect(
      run(r, [
        { volume: vol(), action: null },
        { volume: vol({ status: 'RESERVED', backendStatus: 'reserved' }), action: null },
        { volume: vol(), action: null },
      ]),
    ).toEqual([
      { state: 'RUNNING', backendStatus: 'available' },
      { state: 'RUNNING', backendStatus: 'reserved' },
      {
        state: 'FAILED',
        backendStatus: 'available',
        reason: 'the attach was rolled back: the volume is available again',
      },
    ]);
    expect(
      run(r, [{ volume: vol({ status: 'IN_USE', backendStatus: 'in-use', serverIds: [S] }), action: null }]),
    ).toEqual([{ state: 'SUCCEEDED', backendStatus: 'in-use' }]);
    // Another server's attachment of a multiattach volume is not ours.
    expect(
      run(r, [{ volume: vol({ status: 'IN_USE', backendStatus: 'in-use', serverIds: ['other'] }), action: null }])[0]!
        .state,
    ).toBe('RUNNING');
  });

  it('should let a failed Nova event win over any status, and keep the split in the detach reason', () => {
    const action = {
      action: 'detach_volume',
      requestId: 'req-9',
      failed: true,
      failedStep: 'compute_detach_volume',
      detail: null,
    };
    const r = rules.serverDetach(V, S, 'req-9');
    expect(run(r, [{ serverVolumes: [V], volume: vol(), action }])).toEqual([
      {
        state: 'FAILED',
        backendStatus: 'available',
        reason: `Nova failed the detach at compute_detach_volume (request req-9); Cinder shows the volume available while Nova still lists it on server ${S}`,
      },
    ]);
    // While Cinder still holds it, there is no split to report.
    expect(
      run(r, [
        {
          serverVolumes: [V],
          volume: vol({ status: 'DETACHING', backendStatus: 'detaching', serverIds: [S] }),
          action,
        },
      ]),
    ).toEqual([
      {
        state: 'FAILED',
        backendStatus: 'detaching',
        reason: 'Nova failed the detach at compute_detach_volume (request req-9)',
      },
    ]);
    const attach = rules.serverAttach(V, S, 'req-8');
    expect(
      run(attach, [
        {
          volume: vol({ status: 'RESERVED', backendStatus: 'reserved' }),
          action: {
            ...action,
            requestId: 'req-8',
            action: 'attach_volume',
            failedStep: 'compute_attach_volume',
            detail: 'ClientException',
          },
        },
      ]),
    ).toEqual([
      {
        state: 'FAILED',
        backendStatus: 'reserved',
        reason: 'Nova failed the attach at compute_attach_volume (request req-8): ClientException',
      },
    ]);
  });

  it('should finish a detach when Nova stops listing, and fail one Cinder rolls back to in-use', () => {
    const r = rules.serverDetach(V, S, null);
    const inUse = vol({ status: 'IN_USE', backendStatus: 'in-use', serverIds: [S] });
    expect(
      run(r, [
        {
          serverVolumes: [V],
          volume: vol({ status: 'DETACHING', backendStatus: 'detaching', serverIds: [S] }),
          action: null,
        },
        { serverVolumes: [V], volume: inUse, action: null },
      ]),
    ).toEqual([
      { state: 'RUNNING', backendStatus: 'detaching' },
      { state: 'FAILED', backendStatus: 'in-use', reason: 'the detach was rolled back: the volume is in-use again' },
    ]);
    // Still in-use before Nova started: no rollback yet.
    expect(run(r, [{ serverVolumes: [V], volume: inUse, action: null }])[0]!.state).toBe('RUNNING');
    // The server is gone (404): so is its attachment.
    expect(run(r, [{ serverVolumes: null, volume: vol(), action: null }])).toEqual([
      { state: 'SUCCEEDED', backendStatus: 'available' },
    ]);
  });

  it('should judge status rules on the typed status, not on wire words', () => {
    expect(
      run(rules.volumeExtend(V, 3, null), [
        { volume: vol({ status: 'EXTENDING', backendStatus: 'extending', sizeGiB: 3 }) },
        { volume: vol({ sizeGiB: 3 }) },
      ]).map((p) => p.state),
    ).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(run(rules.volumeExtend(V, 3, null), [{ volume: vol({ sizeGiB: 2 }) }])[0]!.state).toBe('RUNNING');
    expect(
      run(rules.action({ name: 'volumeMigrate' }, V, null), [
        { volume: vol({ status: 'MAINTENANCE', backendStatus: 'maintenance', migration: 'MIGRATING' }) },
        { volume: vol({ migration: 'ERROR' }) },
      ]),
    ).toEqual([
      { state: 'RUNNING', backendStatus: 'maintenance' },
      {
        state: 'FAILED',
        backendStatus: 'available',
        reason: 'Cinder reports the migration failed (migration_status error)',
      },
    ]);
    // A word this gateway does not know is OTHER: not an error, not done for a create.
    expect(
      run(rules.volumeCreate(V, null), [
        { volume: vol({ status: 'OTHER', backendStatus: 'error_managing_deleting' }) },
      ])[0]!.state,
    ).toBe('RUNNING');
    expect(
      run(rules.snapshotDelete(V, null), [
        { snapshot: { phase: 'ERROR_DELETING', backendStatus: 'error_deleting' } },
        { snapshot: null },
      ])[0],
    ).toEqual({
      state: 'FAILED',
      backendStatus: 'error_deleting',
      reason: 'Cinder could not delete the snapshot (error_deleting)',
    });
  });

  it('should read messages for a failure, and for a settled change only when its request is known', () => {
    const settles = rules.action({ name: 'volumeSettles', leaves: 'UPLOADING' }, V, 'req-5');
    const spec = ruleSpec(settles.name)!;
    const done = evaluate(settles, { volume: vol() });
    expect(done.progress.state).toBe('SUCCEEDED');
    expect(wantsMessages(spec, settles, done)).toBe(true);
    expect(wantsMessages(spec, { ...settles, params: { ...settles.params, cinderRequestId: null } }, done)).toBe(false);
    const message = { text: 'copy volume to image:An unknown error occurred.', createdAt: null };
    expect(evaluate(settles, { volume: vol(), messages: [message] }).progress).toEqual({
      state: 'FAILED',
      backendStatus: 'available',
      reason: `Cinder reported a failure: ${message.text}`,
    });
    // A `reason` rule's success stands whatever messages exist.
    const create = rules.volumeCreate(V, 'req-6');
    expect(wantsMessages(ruleSpec(create.name)!, create, evaluate(create, { volume: vol() }))).toBe(false);
    expect(evaluate(create, { volume: vol(), messages: [message] }).progress.state).toBe('SUCCEEDED');
    expect(
      evaluate(create, { volume: vol({ status: 'ERROR', backendStatus: 'error' }), messages: [message] }).progress,
    ).toEqual({ state: 'FAILED', backendStatus: 'error', reason: `Cinder set the volume to error: ${message.text}` });
  });

  it('should fail a rule this adapter does not know instead of guessing', () => {
    const unknown: CompletionRule = { name: 'constructor', params: {}, seen: { x: 1 } };
    expect(ruleSpec('constructor')).toBeUndefined();
    expect(evaluate(unknown, {})).toEqual({
      progress: { state: 'FAILED', backendStatus: null, reason: 'the gateway has no completion rule "constructor"' },
      seen: { x: 1 },
    });
  });
});
