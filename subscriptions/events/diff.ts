/**
 * Turns a watcher's before/after view of one volume into typed changes, the same way for every
 * backend: one volume-level change (CREATED, DELETED, STATUS_CHANGED or UPDATED) when the volume's
 * own fields changed, and one attachment-level change per attachment that appeared, changed state
 * or went away. Nomad's attachments are allocation claims (CLAIMED, DETACHING while Nomad
 * releases one, RELEASED once gone); the others attach and detach.
 */
import type { VolumeDelta } from '../../adapters/watch';
import { encodeGlobalId } from '../../adapters/ids';
import type { Attachment, AttachmentState, Volume } from '../../adapters/model';
import type { ChangeInput, ChangeKeys, ChangeType } from './types';

/** Volume fields compared for UPDATED (attachments are reported per attachment). */
const VOLUME_FIELDS = ['name', 'status', 'backendStatus', 'sizeBytes', 'createdAt', 'updatedAt', 'details'] as const;
const ATTACHMENT_FIELDS = ['state', 'backendState', 'stateReason', 'access', 'consumer', 'device', 'attachedAt', 'nativeId', 'tag', 'deleteOnTermination'] as const;

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

export const volumeGlobalId = (v: Volume): string => encodeGlobalId({ kind: 'Volume', backend: v.ref.backend, scope: v.ref.namespace, nativeId: v.ref.nativeId });
export const attachmentGlobalId = (a: Attachment): string =>
  encodeGlobalId({ kind: 'Attachment', backend: a.volume.backend, scope: a.volume.namespace, nativeId: a.volume.nativeId, subId: a.consumerId });

/** What `attachmentChanged` targets match an attachment by. */
export function attachmentKeys(a: Attachment): ChangeKeys {
  const c = a.consumer;
  switch (c.__typename) {
    case 'VolumeAllocationConsumer':
      return { consumer: a.consumerId, ...(c.nodeId ? { node: c.nodeId } : {}) };
    case 'VolumeServerConsumer':
      return { consumer: a.consumerId, server: c.serverId };
    default:
      return { consumer: a.consumerId };
  }
}

const isClaim = (a: Attachment): boolean => a.consumer.__typename === 'VolumeAllocationConsumer';

/** The type of an attachment that appeared or changed to `state`. */
function arrivalType(a: Attachment): ChangeType {
  if (a.state === 'ERROR') return 'ATTACHMENT_ERROR';
  // A claim being released (Nomad unpublishes it first) is DETACHING; RELEASED once it is gone.
  if (isClaim(a)) return a.state === 'DETACHING' ? 'DETACHING' : a.state === 'DETACHED' ? 'RELEASED' : 'CLAIMED';
  const byState: Record<AttachmentState, ChangeType> = { ATTACHING: 'ATTACHING', ATTACHED: 'ATTACHED', DETACHING: 'DETACHING', DETACHED: 'DETACHED', ERROR: 'ATTACHMENT_ERROR' };
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
    void out.push({ ...base, type, attachment: null, attachmentId: null, previousAttachmentState: null, changedFields, keys: {} });
  const attachmentChange = (type: ChangeType, a: Attachment, previous: Attachment | null, changedFields: string[]): void =>
    void out.push({ ...base, type, attachment: a, attachmentId: attachmentGlobalId(a), previousAttachmentState: previous?.state ?? null, changedFields, keys: attachmentKeys(a) });

  if (!d.before) volumeChange('CREATED', [...VOLUME_FIELDS, 'attachments']);
  else if (!d.after) volumeChange('DELETED', []);
  else {
    const changed: string[] = VOLUME_FIELDS.filter((f) => !same(d.before![f], d.after![f]));
    if (changed.includes('status')) volumeChange('STATUS_CHANGED', changed);
    else if (changed.length > 0) volumeChange('UPDATED', changed);
  }

  const before = new Map((d.before?.attachments ?? []).map((a) => [a.consumerId, a]));
  const after = new Map((d.after?.attachments ?? []).map((a) => [a.consumerId, a]));
  for (const [id, a] of after) {
    const prev = before.get(id) ?? null;
    if (!prev) {
      attachmentChange(arrivalType(a), a, null, [...ATTACHMENT_FIELDS]);
      continue;
    }
    const changed: string[] = ATTACHMENT_FIELDS.filter((f) => !same(prev[f], a[f]));
    if (changed.length === 0) continue;
    // A claim whose allocation changed but whose state did not is reported as CLAIMED again.
    attachmentChange(arrivalType(a), a, prev, changed);
  }
  for (const [id, prev] of before) {
    if (after.has(id)) continue;
    const gone: Attachment = { ...prev, state: 'DETACHED' };
    attachmentChange(isClaim(prev) ? 'RELEASED' : 'DETACHED', gone, prev, ['state']);
  }
  return out;
}
