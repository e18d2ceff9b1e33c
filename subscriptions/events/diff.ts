/**
 * Turns a watcher's before/after view of one volume into typed changes, the same way for every
 * backend: one volume-level change (CREATED, DELETED, STATUS_CHANGED or UPDATED) when the volume's
 * own fields changed, and one attachment-level change per attachment that appeared, changed state
 * or went away. Nomad's attachments are allocation claims (CLAIMED, DETACHING while Nomad
 * releases one, RELEASED once gone); the others attach and detach.
 *
 * One real transition, one change (docs/subscriptions.md, "One event per transition"):
 * - write stamps and mirrors (`updatedAt`, `backendStatus`, Nomad's `modifyIndex` and claim
 *   counts, Cinder's status word) never make a change on their own: they move with every write
 *   (a claim checkpoint, an allocation update, a Nomad restart's re-read) and with the fields they
 *   mirror;
 * - an attachment changes when its `state` does: the backend's steps within one state (Cinder's
 *   `reserved` → `attaching`, an allocation's task updates) are folded into it;
 * - a volume status that only says an attach or detach is under way (RESERVED, ATTACHING,
 *   DETACHING) is folded into the attachment's ATTACHING/DETACHING when the volume shows one.
 *
 * One transition, one sequence, whatever the source: Nomad releases every claim in two volume
 * writes (Nomad's nomad/csi_endpoint.go `Unpublish`: the claim checkpointed node-detached, kept as a
 * past claim that still counts (nomad/structs/csi.go `claimRelease`), then ready to free, which
 * removes it), so its release is `DETACHING`, then `RELEASED`. A read that finds the claim gone
 * without having seen it DETACHING (blocking queries, which see volume writes only, or two writes
 * read as one) sends the missed `DETACHING` first, so that subscribers and UIs see the same sequence
 * from the event stream and from blocking queries.
 */
import type { VolumeDelta } from '../../adapters/contract/watch';
import { carriedDetails } from '../../adapters/contract/details';
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { Attachment, AttachmentState, Volume, VolumeStatus } from '../../adapters/contract/model';
import type { ChangeInput, ChangeKeys, ChangeType } from './types';

/** Volume fields compared for UPDATED (attachments are reported per attachment). */
const VOLUME_FIELDS = ['name', 'status', 'backendStatus', 'sizeBytes', 'createdAt', 'updatedAt', 'details'] as const;
const ATTACHMENT_FIELDS = [
  'state',
  'backendState',
  'stateReason',
  'access',
  'consumer',
  'device',
  'attachedAt',
  'nativeId',
  'tag',
  'deleteOnTermination',
] as const;

/** Volume fields that stamp a write or mirror another field: listed when they changed, never a change alone. */
const CARRIED_FIELDS: ReadonlySet<string> = new Set(['updatedAt', 'backendStatus']);

/**
 * Volume statuses that only say an attach or detach is under way, with the attachment state that
 * reports the same thing: the status move is folded into that attachment's change.
 */
const TRANSIT_STATUS: Partial<Record<VolumeStatus, AttachmentState>> = {
  RESERVED: 'ATTACHING',
  ATTACHING: 'ATTACHING',
  DETACHING: 'DETACHING',
};

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/** Details without the fields their backend declared carried (contract/details.ts: a write index, claim counts, a status word). */
const withoutCarried = (details: Volume['details']): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...details };
  for (const k of carriedDetails(details.__typename)) delete out[k];
  return out;
};

/** Whether field `f` changed in a way that is a change of its own (not a stamp or a mirror). */
const changesAlone = (f: (typeof VOLUME_FIELDS)[number], before: Volume, after: Volume): boolean =>
  !CARRIED_FIELDS.has(f) && (f !== 'details' || !same(withoutCarried(before.details), withoutCarried(after.details)));

/**
 * Whether the delta moves the volume into a status an attachment of it already reports (RESERVED
 * or ATTACHING with an ATTACHING attachment, DETACHING with a DETACHING one): such a move sends no
 * STATUS_CHANGED.
 */
export function foldsStatus(d: VolumeDelta): boolean {
  const says = transitOf(d);
  return says !== undefined && d.after!.attachments.some((a) => a.state === says);
}

/** The attachment state a delta's move into an attach/detach status stands for; undefined for other deltas. */
export function transitOf(d: VolumeDelta): AttachmentState | undefined {
  if (!d.before || !d.after || d.before.status === d.after.status) return undefined;
  return TRANSIT_STATUS[d.after.status];
}

export const volumeGlobalId = (v: Volume): string =>
  encodeGlobalId({ kind: 'Volume', backend: v.ref.backend, scope: v.ref.namespace, nativeId: v.ref.nativeId });
export const attachmentGlobalId = (a: Attachment): string =>
  encodeGlobalId({
    kind: 'Attachment',
    backend: a.volume.backend,
    scope: a.volume.namespace,
    nativeId: a.volume.nativeId,
    subId: a.consumerId,
  });

/** What `attachmentChanged` targets match an attachment by: the consumer's neutral keys (`ConsumerBase`). */
export function attachmentKeys(a: Attachment): ChangeKeys {
  const c = a.consumer;
  return {
    consumer: a.consumerId,
    ...(c.nodeId ? { node: c.nodeId } : {}),
    ...(c.serverId ? { server: c.serverId } : {}),
  };
}

/** Whether the consumer holds the volume by a claim (CLAIMED/RELEASED) rather than an attachment. */
const isClaim = (a: Attachment): boolean => a.consumer.claim === true;

/** The type of an attachment that appeared or changed to `state`. */
function arrivalType(a: Attachment): ChangeType {
  if (a.state === 'ERROR') return 'ATTACHMENT_ERROR';
  // A claim being released (Nomad unpublishes it first) is DETACHING; RELEASED once it is gone.
  if (isClaim(a)) return a.state === 'DETACHING' ? 'DETACHING' : a.state === 'DETACHED' ? 'RELEASED' : 'CLAIMED';
  const byState: Record<AttachmentState, ChangeType> = {
    ATTACHING: 'ATTACHING',
    ATTACHED: 'ATTACHED',
    DETACHING: 'DETACHING',
    DETACHED: 'DETACHED',
    ERROR: 'ATTACHMENT_ERROR',
  };
  return byState[a.state];
}

/** Typed changes of one delta, volume-level first; empty when nothing the model shows changed. */
export function changesOf(d: VolumeDelta): ChangeInput[] {
  const volume = d.after ?? d.before;
  if (!volume) return [];
  const base = {
    backend: volume.ref.backend,
    scope: volume.ref.namespace,
    volumeId: volumeGlobalId(volume),
    volume,
    previousStatus: d.before?.status ?? null,
    observedAt: d.observedAt,
  };
  const out: ChangeInput[] = [];
  const volumeChange = (type: ChangeType, changedFields: string[]): void =>
    void out.push({
      ...base,
      type,
      attachment: null,
      attachmentId: null,
      previousAttachmentState: null,
      changedFields,
      keys: {},
    });
  const attachmentChange = (
    type: ChangeType,
    a: Attachment,
    previous: Attachment | null,
    changedFields: string[],
  ): void =>
    void out.push({
      ...base,
      type,
      attachment: a,
      attachmentId: attachmentGlobalId(a),
      previousAttachmentState: previous?.state ?? null,
      changedFields,
      keys: attachmentKeys(a),
    });

  // A claim released without a DETACHING seen: its DETACHING first, as the event stream shows it.
  const released = d.after
    ? (d.before?.attachments ?? []).filter(
        (a) =>
          isClaim(a) && a.state !== 'DETACHING' && !d.after!.attachments.some((b) => b.consumerId === a.consumerId),
      )
    : [];
  for (const prev of released) attachmentChange('DETACHING', { ...prev, state: 'DETACHING' }, prev, ['state']);

  if (!d.before) volumeChange('CREATED', [...VOLUME_FIELDS, 'attachments']);
  else if (!d.after) volumeChange('DELETED', []);
  else {
    const { before: was, after: now } = d;
    const changed = VOLUME_FIELDS.filter((f) => !same(was[f], now[f]));
    const own = changed.filter((f) => changesAlone(f, was, now));
    if (own.includes('status') && !foldsStatus(d)) volumeChange('STATUS_CHANGED', changed);
    else if (own.some((f) => f !== 'status')) volumeChange('UPDATED', changed);
  }

  const before = new Map((d.before?.attachments ?? []).map((a) => [a.consumerId, a]));
  const after = new Map((d.after?.attachments ?? []).map((a) => [a.consumerId, a]));
  for (const [id, a] of after) {
    const prev = before.get(id) ?? null;
    if (!prev) {
      attachmentChange(arrivalType(a), a, null, [...ATTACHMENT_FIELDS]);
      continue;
    }
    // Only a new state is a transition; what else changed rides along in `changedFields`.
    if (prev.state === a.state) continue;
    attachmentChange(
      arrivalType(a),
      a,
      prev,
      ATTACHMENT_FIELDS.filter((f) => !same(prev[f], a[f])),
    );
  }
  for (const [id, prev] of before) {
    if (after.has(id)) continue;
    const gone: Attachment = { ...prev, state: 'DETACHED' };
    const was = released.includes(prev) ? { ...prev, state: 'DETACHING' as const } : prev;
    attachmentChange(isClaim(prev) ? 'RELEASED' : 'DETACHED', gone, was, ['state']);
  }
  return out;
}
