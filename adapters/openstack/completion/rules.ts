/**
 * The OpenStack completion rules, as data: what "done" and "failed" mean for each asynchronous
 * change. A rule names what to read (`reads`) and is judged by a pure function of the rule and
 * what was read (an {@link Observation}), which also returns the facts to keep (`seen`) for the
 * next evaluation. `check.ts` does the reading; who triggers it (today the poller with
 * the caller's credential, later a watcher) is not this module's concern. docs/operations.md has
 * the same table.
 *
 * Failure signals besides the status words: Nova's instance action for the request that started
 * an attach, detach or swap (an event with result Error fails it at once, naming the step), and
 * Cinder's user messages (read only when a verdict is due).
 */
import type { ChangeCheck, ChangeProgress, CompletionRule, RuleValue } from '../../contract/completion';
import type { CinderVolumeStatus } from '../model';
import type { MessageFacts, SnapshotFacts, VolumeFacts } from '../cinder/results';
import { FEATURES } from '../microversions';
import type { ActionFacts } from '../nova/results';

/** What a rule may ask the reader for. */
export type Source = 'volume' | 'snapshot' | 'serverVolumes' | 'instanceAction';

/** What was read for one evaluation. A key is absent when its rule does not read it. */
export interface Observation {
  /** Cinder's volume `params.volumeId`; null when Cinder answers 404. */
  volume?: VolumeFacts | null;
  /** Cinder's snapshot `params.snapshotId`; null when Cinder answers 404. */
  snapshot?: SnapshotFacts | null;
  /** Volume ids Nova lists on server `params.serverId`; null when the server is gone. */
  serverVolumes?: string[] | null;
  /** Nova's instance action of `params.novaRequestId`; null when there is none to read. */
  action?: ActionFacts | null;
  /** Cinder user messages of the change's request (or about its volume), newest first. */
  messages?: MessageFacts[];
}

type Params = Record<string, RuleValue>;
type Seen = Record<string, RuleValue>;

interface RuleSpec {
  reads: readonly Source[];
  /**
   * How Cinder's user messages take part, read only when a verdict is due: `signal` — a message
   * Cinder wrote while serving the change's request fails it even when the status looks done
   * (a failed upload or retype returns the volume to its old status); `reason` — once failed,
   * the newest message becomes part of the reason.
   */
  messages: 'signal' | 'reason';
  judge(p: Params, seen: Seen, o: Observation): ChangeCheck;
}

const done = (backendStatus: string | null): ChangeProgress => ({ state: 'SUCCEEDED', backendStatus });
const running = (backendStatus: string | null): ChangeProgress => ({ state: 'RUNNING', backendStatus });
const failed = (reason: string, backendStatus: string | null): ChangeProgress => ({
  state: 'FAILED',
  reason,
  backendStatus,
});
const only = (progress: ChangeProgress, seen: Seen = {}): ChangeCheck => ({ progress, seen });

const isError = (s: CinderVolumeStatus): boolean => s.startsWith('ERROR');
const errorStatus = (v: VolumeFacts): ChangeProgress =>
  failed(`Cinder set the volume to ${v.backendStatus}`, v.backendStatus);
const gone = (what: string): ChangeProgress => failed(`the volume disappeared while ${what}`, null);
const str = (v: RuleValue | undefined): string => (typeof v === 'string' ? v : '');

/** The reason when Nova's instance action for the request failed; null while it has not. */
function novaFailure(a: ActionFacts | null | undefined, what: string): string | null {
  if (!a?.failed) return null;
  if (a.failedStep)
    return `Nova failed the ${what} at ${a.failedStep} (request ${a.requestId})${a.detail ? `: ${a.detail}` : ''}`;
  // Below compute 2.51 a member sees the action's message but not its events.
  return `Nova reports the ${what} failed (request ${a.requestId}; the failed step shows from compute microversion ${FEATURES.compute.actionEvents})`;
}

/** Volume-status rules: one judgement of the volume, no memory. */
const byVolume = (
  messages: RuleSpec['messages'],
  judge: (p: Params, v: VolumeFacts | null) => ChangeProgress,
): RuleSpec => ({
  reads: ['volume'],
  messages,
  judge: (p, _seen, o) => only(judge(p, o.volume ?? null)),
});

const bySnapshot = (judge: (s: SnapshotFacts | null) => ChangeProgress): RuleSpec => ({
  reads: ['snapshot'],
  messages: 'reason',
  judge: (_p, _seen, o) => only(judge(o.snapshot ?? null)),
});

/** The rule table, keyed by rule name. */
const RULES = {
  volumeCreate: byVolume('reason', (_p, v) =>
    v === null
      ? gone('being created')
      : v.status === 'AVAILABLE'
        ? done(v.backendStatus)
        : isError(v.status)
          ? errorStatus(v)
          : running(v.backendStatus),
  ),

  volumeGone: byVolume('reason', (_p, v) =>
    v === null
      ? done('deleted')
      : v.status === 'ERROR_DELETING'
        ? failed('Cinder could not delete the volume (error_deleting)', v.backendStatus)
        : running(v.backendStatus),
  ),

  volumeExtend: byVolume('reason', (p, v) => {
    if (v === null) return gone('being extended');
    if (v.status === 'ERROR_EXTENDING') return errorStatus(v);
    return v.status !== 'EXTENDING' && v.sizeGiB >= Number(p.sizeGiB)
      ? done(v.backendStatus)
      : running(v.backendStatus);
  }),

  /** Revert, retype, upload, reimage: Cinder sets `params.leaves` at once and leaves it when done. */
  volumeSettles: byVolume('signal', (p, v) =>
    v === null
      ? gone('changing')
      : isError(v.status)
        ? errorStatus(v)
        : v.status !== p.leaves
          ? done(v.backendStatus)
          : running(v.backendStatus),
  ),

  volumeMigrate: byVolume('signal', (_p, v) => {
    if (v === null) return gone('migrating');
    if (v.migration === 'ERROR')
      return failed('Cinder reports the migration failed (migration_status error)', v.backendStatus);
    if (v.migration === 'SUCCESS' || ((v.migration === null || v.migration === 'NONE') && v.status !== 'MAINTENANCE'))
      return done(v.backendStatus);
    return running(v.backendStatus);
  }),

  hostAttach: byVolume('reason', (p, v) => {
    if (v === null) return gone('being attached');
    if (v.status === 'IN_USE' && v.attachmentIds.includes(str(p.attachmentId))) return done(v.backendStatus);
    return isError(v.status) ? errorStatus(v) : running(v.backendStatus);
  }),

  hostDetach: byVolume('reason', (p, v) => {
    if (v === null || !v.attachmentIds.includes(str(p.attachmentId))) return done(v?.backendStatus ?? 'deleted');
    return isError(v.status) ? errorStatus(v) : running(v.backendStatus);
  }),

  snapshotCreate: bySnapshot((s) =>
    s === null
      ? failed('the snapshot disappeared while being created', null)
      : s.phase === 'AVAILABLE'
        ? done(s.backendStatus)
        : s.phase === 'ERROR'
          ? failed(`Cinder set the snapshot to ${s.backendStatus}`, s.backendStatus)
          : running(s.backendStatus),
  ),

  snapshotDelete: bySnapshot((s) =>
    s === null
      ? done('deleted')
      : s.phase === 'ERROR_DELETING'
        ? failed('Cinder could not delete the snapshot (error_deleting)', s.backendStatus)
        : running(s.backendStatus),
  ),

  /** Attach through Nova completes on Cinder: `in-use` and listing the server (openstack/nova nova/compute/api.py `attach_volume`). */
  serverAttach: {
    reads: ['volume', 'instanceAction'],
    messages: 'reason',
    judge: (p, seen, o) => {
      const v = o.volume ?? null;
      const nova = novaFailure(o.action, 'attach');
      if (nova) return only(failed(nova, v?.backendStatus ?? null), seen);
      if (v === null) return only(gone('being attached'), seen);
      const attached = v.serverIds.includes(str(p.serverId));
      if (v.status === 'IN_USE' && attached) return only(done(v.backendStatus), seen);
      if (isError(v.status)) return only(errorStatus(v), seen);
      // Nova may reserve after answering (2.101+): only a return to `available` after the
      // attach was seen under way is a rollback.
      const started = seen.started === true || v.status === 'RESERVED' || v.status === 'ATTACHING';
      if (started && v.status === 'AVAILABLE' && !attached)
        return only(failed('the attach was rolled back: the volume is available again', v.backendStatus), {
          ...seen,
          started,
        });
      return only(running(v.backendStatus), { ...seen, started });
    },
  },

  /** Detach through Nova completes when Nova no longer lists the volume on the server. */
  serverDetach: {
    reads: ['serverVolumes', 'volume', 'instanceAction'],
    messages: 'reason',
    judge: (p, seen, o) => {
      const v = o.volume ?? null;
      const volumeId = str(p.volumeId);
      const listed = (o.serverVolumes ?? []).includes(volumeId);
      const nova = novaFailure(o.action, 'detach');
      if (nova) {
        // Nova's compute step failed after Cinder let go: the two services now disagree.
        const split =
          listed && v !== null && !v.serverIds.includes(str(p.serverId))
            ? `; Cinder shows the volume ${v.backendStatus} while Nova still lists it on server ${str(p.serverId)}`
            : '';
        return only(failed(nova + split, v?.backendStatus ?? null), seen);
      }
      if (!listed) return only(done(v?.backendStatus ?? null), seen);
      if (v !== null && isError(v.status)) return only(errorStatus(v), seen);
      const started = seen.started === true || v?.status === 'DETACHING';
      if (started && v?.status === 'IN_USE' && v.serverIds.includes(str(p.serverId))) {
        return only(failed('the detach was rolled back: the volume is in-use again', v.backendStatus), {
          ...seen,
          started,
        });
      }
      return only(running(v?.backendStatus ?? null), { ...seen, started });
    },
  },

  /** A volume swap finishes when Nova lists the new volume on the server. */
  serverAttachmentUpdate: {
    reads: ['serverVolumes', 'instanceAction'],
    messages: 'reason',
    judge: (p, seen, o) => {
      const nova = novaFailure(o.action, 'volume swap');
      if (nova) return only(failed(nova, null), seen);
      if (o.serverVolumes === null) return only(failed(`server ${str(p.serverId)} no longer exists`, null), seen);
      return only((o.serverVolumes ?? []).includes(str(p.newVolumeId)) ? done(null) : running(null), seen);
    },
  },
} satisfies Record<string, RuleSpec>;

/** The names of the rules this adapter stores with operations. */
export type RuleName = keyof typeof RULES;

/** The spec of a rule; a name this adapter does not know is a programming or storage error. */
export function ruleSpec(name: string): RuleSpec | undefined {
  return Object.hasOwn(RULES, name) ? (RULES as Record<string, RuleSpec>)[name] : undefined;
}

/**
 * Whether Cinder's user messages should be read before the verdict of `check` stands: for a
 * failure's reason, or for a `signal` rule's success when the request that started the change is
 * known (other messages about the volume may be older than the change).
 */
export function wantsMessages(spec: RuleSpec, rule: CompletionRule, check: ChangeCheck): boolean {
  if (check.progress.state === 'FAILED') return true;
  return (
    check.progress.state === 'SUCCEEDED' &&
    spec.messages === 'signal' &&
    typeof rule.params.cinderRequestId === 'string'
  );
}

/**
 * Evaluates `rule` against `o`: pure, no I/O. With `o.messages` read, a `signal` rule's success
 * becomes a failure when Cinder wrote a message for its request, and a failure's reason ends with
 * the newest message.
 */
export function evaluate(rule: CompletionRule, o: Observation): ChangeCheck {
  const spec = ruleSpec(rule.name);
  if (!spec) return only(failed(`the gateway has no completion rule "${rule.name}"`, null), rule.seen);
  const check = spec.judge(rule.params, rule.seen, o);
  const message = o.messages?.[0];
  if (!message) return check;
  const p = check.progress;
  if (p.state === 'FAILED') return { ...check, progress: { ...p, reason: `${p.reason}: ${message.text}` } };
  if (p.state === 'SUCCEEDED' && spec.messages === 'signal')
    return { ...check, progress: failed(`Cinder reported a failure: ${message.text}`, p.backendStatus ?? null) };
  return check;
}

// ---- rule constructors ----------------------------------------------------------------------

const rule = (name: RuleName, params: Params): CompletionRule => ({ name, params, seen: {} });

/** Transitional statuses a `volumeSettles` rule waits out. */
export type SettlingStatus = Extract<CinderVolumeStatus, 'REVERTING' | 'RETYPING' | 'UPLOADING' | 'DOWNLOADING'>;

/** The completion of a Cinder volume action, as the action table names it. */
export type ActionRule =
  { name: 'volumeSettles'; leaves: SettlingStatus } | { name: 'volumeGone' } | { name: 'volumeMigrate' };

/** Rules by change; request ids are those of the answer that started the change (null: none sent). */
export const rules = {
  volumeCreate: (volumeId: string, cinderRequestId: string | null) =>
    rule('volumeCreate', { volumeId, cinderRequestId }),
  volumeGone: (volumeId: string, cinderRequestId: string | null) => rule('volumeGone', { volumeId, cinderRequestId }),
  volumeExtend: (volumeId: string, sizeGiB: number, cinderRequestId: string | null) =>
    rule('volumeExtend', { volumeId, sizeGiB, cinderRequestId }),
  action: (r: ActionRule, volumeId: string, cinderRequestId: string | null) =>
    rule(
      r.name,
      r.name === 'volumeSettles' ? { volumeId, leaves: r.leaves, cinderRequestId } : { volumeId, cinderRequestId },
    ),
  snapshotCreate: (snapshotId: string, cinderRequestId: string | null) =>
    rule('snapshotCreate', { snapshotId, cinderRequestId }),
  snapshotDelete: (snapshotId: string, cinderRequestId: string | null) =>
    rule('snapshotDelete', { snapshotId, cinderRequestId }),
  hostAttach: (volumeId: string, attachmentId: string) => rule('hostAttach', { volumeId, attachmentId }),
  hostDetach: (volumeId: string, attachmentId: string) => rule('hostDetach', { volumeId, attachmentId }),
  serverAttach: (volumeId: string, serverId: string, novaRequestId: string | null) =>
    rule('serverAttach', { volumeId, serverId, novaRequestId }),
  serverDetach: (volumeId: string, serverId: string, novaRequestId: string | null) =>
    rule('serverDetach', { volumeId, serverId, novaRequestId }),
  serverAttachmentUpdate: (serverId: string, volumeId: string, newVolumeId: string, novaRequestId: string | null) =>
    rule('serverAttachmentUpdate', { serverId, volumeId, newVolumeId, novaRequestId }),
} as const;
