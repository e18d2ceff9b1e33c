/**
 * STUCK_TRANSITION and ERROR_STATE. A memory change holds its status (`CREATING`, `ATTACHING`,
 * `DETACHING`, `EXTENDING`, `DELETING`) for `operationDelayMs`; one held past `stuckTransitionMs`
 * has no change behind it (a data file left it, or a reload ended the change), and unless one of
 * the gateway's own operations drives it, it is stuck. `ERROR` is a dead end at once.
 *
 * Since: the memory backend records no transition time, and `updatedAt` moves on any write
 * (`updateVolume` too), so the age counts from the earlier of `updatedAt` and when the doctor first
 * saw the status (LAST_WRITE_OR_FIRST_SEEN): the transition began at or before both.
 */
import type { DiagnosisContext, Finding, Remedy, StatusEvidence } from '../../contract/diagnosis';
import type { Volume, VolumeStatus } from '../../contract/model';
import { iso, millis } from './clock';
import { detach, extend, manual, remove } from './remedies';
import type { MemoryThresholds } from './thresholds';

const GIB = 1024 ** 3;
const TRANSITIONS: ReadonlySet<VolumeStatus> = new Set(['CREATING', 'ATTACHING', 'DETACHING', 'EXTENDING', 'DELETING']);

/** The memory backend's own word for a status (the store always sets it: the status in lower case). */
const wordOf = (v: Volume): string => v.backendStatus ?? v.status.toLowerCase();

function evidence(v: Volume, since: number, thresholdMs: number | null): StatusEvidence {
  return {
    __typename: 'VolumeStatusEvidence',
    status: v.status,
    backendStatus: wordOf(v),
    updatedAt: v.updatedAt,
    since: iso(since),
    sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
    thresholdMs,
  };
}

const EDIT_DATA = (status: string): Remedy =>
  manual({
    action: 'CLEAR_STATUS',
    does: `Remove the held status "${status}" from the volume in the data file and reload it.`,
    risk: 'The volume shows as available or in use by its attachments, whatever left it in this status.',
    who: 'OPERATOR',
  });

/** The gateway's mutations that retry or undo a stuck transition, safest first. */
function retries(v: Volume): Remedy[] {
  const moving = (state: string) => v.attachments.filter((a) => a.state === state);
  switch (v.status) {
    case 'DETACHING':
      return moving('DETACHING').map((a) =>
        detach(v.ref, a.consumerId, {
          action: 'RETRY_DETACH',
          does: `Detaches attachment ${a.consumerId} (host ${a.consumer.nodeId}) again, ending the detach.`,
          risk: 'Nothing beyond the detach that was asked for.',
          who: 'VOLUME_WRITER',
        }),
      );
    case 'ATTACHING':
      return moving('ATTACHING').map((a) =>
        detach(v.ref, a.consumerId, {
          action: 'ABORT_ATTACH',
          does: `Detaches the half-made attachment ${a.consumerId} (host ${a.consumer.nodeId}).`,
          risk: 'The host does not get the volume; attach it again if it should.',
          who: 'VOLUME_WRITER',
        }),
      );
    case 'DELETING':
      return [
        remove(v.ref, {
          action: 'RETRY_DELETE',
          does: 'Deletes the volume again.',
          risk: 'Its data are lost, as the delete that was asked for meant.',
          who: 'VOLUME_WRITER',
        }),
      ];
    case 'CREATING':
      return [
        remove(v.ref, {
          action: 'DELETE_UNFINISHED',
          does: 'Deletes the volume whose create never finished; create it again if needed.',
          risk: 'Nothing was written to a volume still being created.',
          who: 'VOLUME_WRITER',
        }),
      ];
    case 'EXTENDING':
      return [
        extend(v.ref, (v.sizeBytes ?? 0) + GIB, {
          action: 'RETRY_EXTEND',
          does: 'Extends the volume by 1 GiB more than its size now, ending the extend.',
          risk: 'The size the stuck extend asked for is not recorded: the volume may end up another size.',
          who: 'VOLUME_WRITER',
        }),
      ];
    default:
      return [];
  }
}

/** Adds the volume's stuck transition to `out`. */
export function stuckTransition(v: Volume, ctx: DiagnosisContext, t: MemoryThresholds, out: Finding[]): void {
  if (!TRANSITIONS.has(v.status) || ctx.operationRunning(v.ref)) return;
  const word = wordOf(v);
  const seen = ctx.firstSeen(v.ref, word);
  const written = millis(v.updatedAt);
  const since = written === null ? seen : Math.min(written, seen);
  if (ctx.now - since < t.stuckTransitionMs) return;
  out.push({
    kind: 'STUCK_TRANSITION',
    // An attach or detach that never ends keeps a host from the volume; the rest hold it idle.
    severity: v.status === 'ATTACHING' || v.status === 'DETACHING' ? 'CRITICAL' : 'WARNING',
    volume: v.ref,
    subject: word,
    // The backend's own time only when the last write is the earlier one.
    startedAt: written !== null && written <= seen ? iso(written) : null,
    summary: `Volume ${v.ref.namespace}/${v.ref.nativeId} has been ${word} since ${iso(since)} with no change running on it.`,
    evidence: evidence(v, since, t.stuckTransitionMs),
    remedies: [...retries(v), EDIT_DATA(word)],
  });
}

/** Adds the volume's error to `out`. */
export function errorState(v: Volume, ctx: DiagnosisContext, out: Finding[]): void {
  if (v.status !== 'ERROR') return;
  const word = wordOf(v);
  const seen = ctx.firstSeen(v.ref, word);
  const written = millis(v.updatedAt);
  const since = written === null ? seen : Math.min(written, seen);
  const remedies: Remedy[] = [EDIT_DATA(word)];
  // The memory backend deletes a volume in error, but not while it is attached.
  if (v.attachments.length === 0)
    remedies.push(
      remove(v.ref, {
        action: 'DELETE_VOLUME',
        does: 'Deletes the volume.',
        risk: 'Its data are lost.',
        who: 'VOLUME_WRITER',
      }),
    );
  out.push({
    kind: 'ERROR_STATE',
    severity: 'CRITICAL',
    volume: v.ref,
    subject: word,
    startedAt: written !== null && written <= seen ? iso(written) : null,
    summary: `Volume ${v.ref.namespace}/${v.ref.nativeId} is in error: nothing the backend does ends it.`,
    evidence: evidence(v, since, null),
    remedies,
  });
}
