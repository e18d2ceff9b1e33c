/**
 * The memory doctor's remedies that a gateway mutation applies, as documents and variables ready to
 * send (schema/volume.graphql: the memory backend answers `detachVolume` of a host attachment,
 * `deleteVolume`, `extendVolume` and `attachVolume` to a host). A transition with no change running
 * holds nothing (context.ts `blockingStatus`), so these also retry a stuck one.
 */
import type { Remedy, RemedyActor, RemedyMutation } from '../../contract/diagnosis';
import { encodeGlobalId } from '../../contract/ids';
import type { VolumeRef } from '../../contract/model';

const DETACH = `mutation DetachVolume($input: DetachVolumeInput!) {
  detachVolume(input: $input) { operation { id state } }
}`;
const DELETE = `mutation DeleteVolume($input: DeleteVolumeInput!) {
  deleteVolume(input: $input) { deletedId operation { id state } }
}`;
const EXTEND = `mutation ExtendVolume($input: ExtendVolumeInput!) {
  extendVolume(input: $input) { operation { id state } }
}`;
const ATTACH = `mutation AttachVolume($input: AttachVolumeInput!) {
  attachVolume(input: $input) { operation { id state } }
}`;

/** The volume's global id, as the gateway issues it. */
const volumeId = (ref: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId });

/** A host attachment's global id (`VolumeAttachment.id`): the volume and the attachment id. */
const attachmentId = (ref: VolumeRef, attachment: string): string =>
  encodeGlobalId({
    kind: 'Attachment',
    backend: ref.backend,
    scope: ref.namespace,
    nativeId: ref.nativeId,
    subId: attachment,
  });

/** What a remedy says, beside its mutation. */
export interface RemedyText {
  action: string;
  does: string;
  risk: string;
  who: RemedyActor;
}

const remedy = (t: RemedyText, mutation: RemedyMutation | null): Remedy => ({ ...t, mutation, cli: null });

/** A remedy with no mutation: the backend's own, or a person's. */
export const manual = (t: RemedyText): Remedy => remedy(t, null);

/** Detaches the host attachment `attachment` of the volume. */
export const detach = (ref: VolumeRef, attachment: string, t: RemedyText): Remedy =>
  remedy(t, {
    document: DETACH,
    variables: {
      input: { volumeId: volumeId(ref), target: { host: { hostAttachmentId: attachmentId(ref, attachment) } } },
    },
  });

/** Deletes the volume. */
export const remove = (ref: VolumeRef, t: RemedyText): Remedy =>
  remedy(t, { document: DELETE, variables: { input: { volumeId: volumeId(ref) } } });

/** Extends the volume to `newSizeBytes`. */
export const extend = (ref: VolumeRef, newSizeBytes: number, t: RemedyText): Remedy =>
  remedy(t, { document: EXTEND, variables: { input: { volumeId: volumeId(ref), newSizeBytes } } });

/** Attaches the volume to `host`. */
export const attach = (ref: VolumeRef, host: string, t: RemedyText): Remedy =>
  remedy(t, {
    document: ATTACH,
    variables: { input: { volumeId: volumeId(ref), target: { host: { connector: { host } } } } },
  });
