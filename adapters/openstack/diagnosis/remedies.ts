/**
 * The remedies the OpenStack doctor offers, one builder each: what it does, what it risks, the
 * gateway mutation that applies it (a document and its variables, ready to send), the OpenStack
 * command line that does the same, and who may apply it (Cinder's admin actions say ADMIN). The
 * gateway never applies one itself. The risks follow Cinder's force-detach spec (a reset that
 * disagrees with the storage backend lets a second server attach a volume still in use).
 */
import type { Remedy, RemedyMutation } from '../../contract/diagnosis';
import { encodeGlobalId } from '../../contract/ids';
import type { VolumeRef } from '../../contract/model';

const volumeId = (ref: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId });

/** The fields every Cinder action mutation selects: the operation and the volume as read after it. */
const ACTION_RESULT = '{ operation { id state } volume { id status } }';

const mutation = (name: string, input: string, variables: Record<string, unknown>): RemedyMutation => ({
  document: `mutation Remedy($input: ${input}!) { ${name}(input: $input) ${ACTION_RESULT} }`,
  variables: { input: variables },
});

/** The statuses a reset remedy sets (schema `CinderVolumeStatus` values and their wire words). */
export type ResetTarget = 'AVAILABLE' | 'IN_USE' | 'ERROR';
const WIRE: Record<ResetTarget, string> = { AVAILABLE: 'available', IN_USE: 'in-use', ERROR: 'error' };

/** Cinder `os-reset_status` (admin): the status, and `detached` when asked. */
export function resetStatus(
  ref: VolumeRef,
  to: ResetTarget,
  o: { detached?: boolean; does: string; risk: string },
): Remedy {
  const detached = o.detached === true;
  return {
    action: to === 'ERROR' ? 'RESET_STATUS_TO_ERROR' : 'RESET_STATUS',
    does: o.does,
    risk: o.risk,
    mutation: mutation('resetCinderVolumeStatus', 'ResetCinderVolumeStatusInput', {
      volumeId: volumeId(ref),
      status: to,
      ...(detached ? { attachStatus: 'DETACHED' } : {}),
    }),
    cli: `openstack volume set --state ${WIRE[to]}${detached ? ' --detached' : ''} ${ref.nativeId}`,
    who: 'ADMIN',
  };
}

/** Cinder `os-roll_detaching` (the volume's owner): `detaching` back to `in-use`. */
export const rollDetaching = (ref: VolumeRef): Remedy => ({
  action: 'ROLL_DETACHING',
  does: "Sets Cinder's status back to in-use, as before the detach began (os-roll_detaching).",
  risk: 'Nothing on the host or in Nova changes; the volume stays attached and the detach must be asked again.',
  mutation: mutation('rollDetachingCinderVolume', 'CinderVolumeInput', { volumeId: volumeId(ref) }),
  // Neither the openstack nor the cinder client has a command for it.
  cli: null,
  who: 'VOLUME_WRITER',
});

/** Cinder `os-unreserve` (the volume's owner): a legacy `attaching` back to available or in-use. */
export const unreserve = (ref: VolumeRef): Remedy => ({
  action: 'UNRESERVE',
  does: "Ends Cinder's attaching status (os-unreserve): available, or in-use when other attachments remain.",
  risk: 'If a host is still connecting the volume, Cinder then calls it free while the host may use it: check the server first.',
  mutation: mutation('unreserveCinderVolume', 'CinderVolumeInput', { volumeId: volumeId(ref) }),
  cli: null,
  who: 'VOLUME_WRITER',
});

/** Nova's detach of the volume from `serverId`, through the gateway's `detachVolume`. */
export const detachFromServer = (ref: VolumeRef, serverId: string, risk: string): Remedy => ({
  action: 'DETACH_FROM_SERVER',
  does: `Asks Nova to detach the volume from server ${serverId}: the host disconnects it, Cinder deletes its attachment and Nova its block device mapping.`,
  risk,
  mutation: {
    document:
      'mutation Remedy($input: DetachVolumeInput!) { detachVolume(input: $input) { operation { id state } volume { id status } } }',
    variables: { input: { volumeId: volumeId(ref), target: { server: { serverId } } } },
  },
  cli: `openstack server remove volume ${serverId} ${ref.nativeId}`,
  who: 'VOLUME_WRITER',
});

/** Cinder `os-force_detach` (admin): terminates the connection and deletes Cinder's attachment. */
export const forceDetach = (ref: VolumeRef, attachmentId: string | null): Remedy => ({
  action: 'FORCE_DETACH',
  does: "Has Cinder's driver terminate the host connection, then deletes Cinder's attachment (os-force_detach): available and detached in Cinder.",
  risk: 'Nova keeps its block device mapping, and the guest may still see the disk: detach it in Nova first, or the volume can be attached elsewhere while this server still writes to it (data corruption).',
  mutation: mutation('forceDetachCinderVolume', 'ForceDetachCinderVolumeInput', {
    volumeId: volumeId(ref),
    ...(attachmentId ? { attachmentId } : {}),
  }),
  // Neither the openstack nor the cinder client has a command for it.
  cli: null,
  who: 'ADMIN',
});

/** Cinder `os-force_delete` (admin): deletes in any status but attached. */
export const forceDelete = (ref: VolumeRef, risk: string): Remedy => ({
  action: 'FORCE_DELETE',
  does: 'Deletes the volume whatever its status (os-force_delete).',
  risk,
  mutation: mutation('forceDeleteCinderVolume', 'CinderVolumeInput', { volumeId: volumeId(ref) }),
  cli: `openstack volume delete --force ${ref.nativeId}`,
  who: 'ADMIN',
});

/** An ordinary delete (the volume's owner), allowed in `error`, `error_restoring`, `error_extending`, `error_managing`. */
export const deleteVolume = (ref: VolumeRef, risk: string): Remedy => ({
  action: 'DELETE_VOLUME',
  does: 'Deletes the volume.',
  risk,
  mutation: {
    document:
      'mutation Remedy($input: DeleteVolumeInput!) { deleteVolume(input: $input) { deletedId operation { id state } } }',
    variables: { input: { volumeId: volumeId(ref) } },
  },
  cli: `openstack volume delete ${ref.nativeId}`,
  who: 'VOLUME_WRITER',
});

/** Deleting the connector-less attachment a `reserved` volume holds (the attachments API; the owner may). */
export const deleteReservedAttachment = (ref: VolumeRef): Remedy => ({
  action: 'DELETE_RESERVED_ATTACHMENT',
  does: "Deletes the reserved attachment that holds the volume (Cinder's attachments API): available again when it was the only one.",
  risk: 'If Nova still has a block device mapping for it, Nova and Cinder then disagree (attachment drift); no data is touched.',
  // The view lists attached attachments only, so the reserved one's id is not known here.
  mutation: null,
  cli: `openstack volume attachment list --volume-id ${ref.nativeId}; openstack volume attachment delete <attachment-id>`,
  who: 'VOLUME_WRITER',
});

/** A reboot of the server: Nova (28.0.0, 2023.2, and later) drops block device mappings whose Cinder attachment is gone, and Cinder attachments it has no mapping for. */
export const rebootServer = (serverId: string): Remedy => ({
  action: 'REBOOT_SERVER',
  does: `Reboots server ${serverId}: Nova 28.0.0 (2023.2) and later reconcile its volume attachments with Cinder's on reboot, deleting the side the other lacks.`,
  risk: "The server's workload restarts; Nova before 2023.2 changes nothing on reboot.",
  mutation: null,
  cli: `openstack server reboot ${serverId}`,
  who: 'VOLUME_WRITER',
});
