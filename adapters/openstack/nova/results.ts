/**
 * Nova wire shapes (servers, volume attachments, instance actions) and their mapping to the
 * unified model, including the join of Nova's attachment list with Cinder's view of each volume.
 * Keys vary by microversion and role (openstack/nova nova/api/openstack/compute/volume_attachments.py;
 * Nova API reference, "Servers with volume attachments"), so optional keys are read defensively.
 * No other file reads a Nova wire field.
 */
import type { AttachTarget } from '../../contract/call-inputs';
import type { Attachment, ComputeServer, Volume, VolumeRef } from '../../contract/model';
import { cinderDetails, isServerConsumer, serverConsumer } from '../model';
import { sanitizeUpstreamMessage } from '../../http/upstream-message';

export interface NovaServerView {
  id: string;
  name: string;
  status: string;
  tenant_id?: string;
  created?: string;
  'OS-EXT-STS:vm_state'?: string;
  'os-extended-volumes:volumes_attached'?: Array<{ id: string; delete_on_termination?: boolean }>;
}

/** `volumeAttachment` element; keys vary by microversion (openstack/nova nova/api/openstack/compute/volume_attachments.py). */
export interface NovaVolumeAttachment {
  /** The volume id, until 2.88. */
  id?: string;
  volumeId: string;
  serverId: string;
  /** Omitted when the BDM has no device name yet. */
  device?: string | null;
  /** 2.70+. */
  tag?: string | null;
  /** 2.79+. */
  delete_on_termination?: boolean;
  /** 2.89+: the Cinder attachment. */
  attachment_id?: string;
  bdm_uuid?: string;
}

export interface NovaActionEvent {
  event: string;
  start_time?: string | null;
  finish_time?: string | null;
  /** `Success`, `Error`, or null while running; members see events only from 2.51. */
  result?: string | null;
  /** Admins only; never passed on. */
  traceback?: string | null;
  /** Admins only, 2.84+: the exception's name. */
  details?: string | null;
}

/** `GET /servers/{id}/os-instance-actions/{request_id}` → `instanceAction`. */
export interface NovaInstanceAction {
  action: string;
  request_id: string;
  /** `Error` once an event failed, else null. */
  message?: string | null;
  events?: NovaActionEvent[];
}

export interface Links {
  rel: string;
  href: string;
}

export function toServer(backend: string, projectId: string, s: NovaServerView): ComputeServer {
  return {
    backend,
    projectId: s.tenant_id ?? projectId,
    id: s.id,
    name: s.name,
    status: s.status,
    vmState: s['OS-EXT-STS:vm_state'] ?? null,
    volumeIds: (s['os-extended-volumes:volumes_attached'] ?? []).map((v) => v.id),
    createdAt: s.created ?? null,
  };
}

/** The marker of the servers page after `servers` when Nova links one (the last id), else null. */
export const nextServerMarker = (
  page: { servers?: NovaServerView[]; servers_links?: Links[] } | undefined,
): string | null => {
  const servers = page?.servers ?? [];
  return page?.servers_links?.some((l) => l.rel === 'next') && servers.length > 0
    ? servers[servers.length - 1]!.id
    : null;
};

/** The volume ids a server's attachment list names (lower-case, as Cinder stores them). */
export const attachedVolumeIds = (list: readonly NovaVolumeAttachment[]): string[] =>
  list.map((a) => a.volumeId.toLowerCase());

/** Nova's answer to an attach (≤ 2.100; ≥ 2.101 answers without body) → the attachment, starting. */
export function toStartedAttachment(backend: string, projectId: string, a: NovaVolumeAttachment): Attachment {
  return {
    __typename: 'VolumeAttachment',
    volume: { backend, namespace: projectId, nativeId: a.volumeId },
    consumerId: a.serverId,
    state: 'ATTACHING',
    backendState: null,
    stateReason: null,
    access: 'READ_WRITE',
    consumer: serverConsumer(a.serverId, backend),
    device: a.device ?? null,
    attachedAt: null,
    nativeId: a.attachment_id ?? null,
    tag: a.tag ?? null,
    deleteOnTermination: a.delete_on_termination ?? null,
  };
}

/** An attach to a server the gateway accepted and Nova answered without a body (≥ 2.101): the attachment, starting. */
export function toRequestedAttachment(ref: VolumeRef, t: Extract<AttachTarget, { kind: 'server' }>): Attachment {
  return {
    __typename: 'VolumeAttachment',
    volume: ref,
    consumerId: t.serverId,
    state: 'ATTACHING',
    backendState: null,
    stateReason: null,
    access: 'READ_WRITE',
    consumer: serverConsumer(t.serverId, ref.backend),
    device: t.device ?? null,
    attachedAt: null,
    nativeId: null,
    tag: t.tag ?? null,
    deleteOnTermination: t.deleteOnTermination ?? null,
  };
}

/**
 * One attachment Nova lists on a server, checked against Cinder's view of the volume (`volume`;
 * null when Cinder has no such volume). Cinder decides the state; an attachment Nova lists and
 * Cinder does not (nor is attaching or detaching) is ERROR, with the split in `stateReason`:
 * a detach that failed in Nova's compute service after Cinder let go leaves exactly that.
 */
export function toServerAttachment(
  backend: string,
  projectId: string,
  a: NovaVolumeAttachment,
  volume: Volume | null,
): Attachment {
  const serverId = a.serverId.toLowerCase();
  const base = toStartedAttachment(backend, volume?.ref.namespace ?? projectId, a);
  const inCinder = volume?.attachments.find(
    (x) => isServerConsumer(x.consumer) && x.consumer.serverId.toLowerCase() === serverId,
  );
  if (inCinder)
    return {
      ...base,
      state: inCinder.state,
      backendState: inCinder.backendState,
      attachedAt: inCinder.attachedAt,
      nativeId: base.nativeId ?? inCinder.nativeId,
      access: inCinder.access,
    };
  const status = cinderDetails(volume)?.cinderStatus ?? null;
  if (status === 'RESERVED' || status === 'ATTACHING') return { ...base, backendState: volume!.backendStatus };
  if (status === 'DETACHING') return { ...base, state: 'DETACHING', backendState: volume!.backendStatus };
  const cinderSays =
    volume === null
      ? 'Cinder has no such volume'
      : `Cinder shows the volume ${volume.backendStatus ?? 'in an unknown status'} with no attachment to this server`;
  return {
    ...base,
    state: 'ERROR',
    backendState: volume?.backendStatus ?? null,
    stateReason: `Nova lists volume ${a.volumeId} on server ${a.serverId} but ${cinderSays}: Nova and Cinder disagree (a detach that failed in Nova's compute service after Cinder let go leaves this)`,
  };
}

/** What completion rules need of an instance action, in the gateway's words. */
export interface ActionFacts {
  /** Nova's action name, e.g. `detach_volume`. */
  action: string;
  requestId: string;
  /** The action or one of its events failed. */
  failed: boolean;
  /** The failed step's name (e.g. `compute_detach_volume`); null when the caller cannot see events. */
  failedStep: string | null;
  /** The failure's short detail (admins, 2.84+), sanitized; null when absent. Never the traceback. */
  detail: string | null;
}

/** Longest detail kept from an event (the exception's name is short; anything longer is cut). */
const MAX_DETAIL = 200;

export function toActionFacts(a: NovaInstanceAction): ActionFacts {
  const failedEvent = (a.events ?? []).find((e) => e.result === 'Error');
  const detail = failedEvent?.details ? sanitizeUpstreamMessage(failedEvent.details, MAX_DETAIL) || null : null;
  return {
    action: a.action,
    requestId: a.request_id,
    failed: a.message === 'Error' || failedEvent !== undefined,
    failedStep: failedEvent?.event ?? null,
    detail,
  };
}
