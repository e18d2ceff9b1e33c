/**
 * How Cinder renders its records (cinder/api/v3/views/*, recorded in cinder-21 and
 * keystone-22): key order, which keys appear at which microversion and for whom, `bootable` as a
 * string, only `attached` attachments in a volume, `""` for unset attachment times, and the
 * `os-vol-*` extension keys on show/detail only.
 */
import { cinderTime } from '../clock';
import type { Version } from '../http/microversion';
import { atLeast } from '../http/microversion';
import type { Attachment, Snapshot, UserMessage, Volume, VolumeType } from '../model';
import { backendOf, type SimState } from '../state';

/** Who asks and how: what every view needs from the request. */
export interface ViewContext {
  mv: Version;
  isAdmin: boolean;
  /** scheme://host:port of the request, for links. */
  base: string;
  /** The project segment of the request URL (null for 3.67-style URLs without one). */
  urlProject: string | null;
}

export function selfLinks(vc: ViewContext, collection: string, id: string): Array<{ rel: string; href: string }> {
  const p = vc.urlProject === null ? '' : `/${vc.urlProject}`;
  return [
    { rel: 'self', href: `${vc.base}/v3${p}/${collection}/${id}` },
    { rel: 'bookmark', href: `${vc.base}${p}/${collection}/${id}` },
  ];
}

/** User metadata plus the admin metadata Cinder makes visible (readonly, attached_mode). */
export function visibleMetadata(v: Volume): Record<string, string> {
  const out: Record<string, string> = { ...v.metadata };
  for (const [k, val] of Object.entries(v.adminMetadata)) if (k === 'readonly' || k === 'attached_mode') out[k] = val;
  return out;
}

/**
 * The volume view. `extensions`: add the show/detail-only keys (`os-vol-*`,
 * `volume_image_metadata`) — never on create/update responses.
 */
export function volumeView(state: SimState, v: Volume, vc: ViewContext, extensions: boolean): Record<string, unknown> {
  const type = state.typeOf(v);
  const out: Record<string, unknown> = {
    id: v.id,
    status: v.status,
    size: v.size,
    availability_zone: v.availabilityZone,
    created_at: cinderTime(v.createdAt),
    updated_at: cinderTime(v.updatedAt),
    name: v.name,
    description: v.description,
    volume_type: type ? type.name : null,
    snapshot_id: v.snapshotId,
    source_volid: v.sourceVolid,
    metadata: visibleMetadata(v),
    links: selfLinks(vc, 'volumes', v.id),
    user_id: v.userId,
    bootable: v.bootable ? 'true' : 'false',
    encrypted: v.encryptionKeyId !== null,
    replication_status: v.replicationStatus,
    consistencygroup_id: null,
    multiattach: state.isMultiattachType(type),
    attachments: v.attachments
      .filter((a) => a.attachStatus === 'attached')
      .map((a) => volumeAttachmentView(v, a, vc.isAdmin)),
  };
  if (vc.isAdmin) out.migration_status = v.migrationStatus;
  if (atLeast(vc.mv, '3.13')) out.group_id = v.groupId;
  if (atLeast(vc.mv, '3.21') && vc.isAdmin) out.provider_id = v.providerId;
  if (atLeast(vc.mv, '3.48')) {
    out.shared_targets = false;
    out.service_uuid = state.serviceUuids.get(backendOf(v.host)) ?? null;
  }
  if (atLeast(vc.mv, '3.61') && vc.isAdmin) out.cluster_name = null;
  if (atLeast(vc.mv, '3.63')) out.volume_type_id = v.volumeTypeId;
  if (atLeast(vc.mv, '3.64') && v.encryptionKeyId !== null) out.encryption_key_id = v.encryptionKeyId;
  if (atLeast(vc.mv, '3.65')) out.consumes_quota = v.consumesQuota;
  if (extensions) {
    out['os-vol-tenant-attr:tenant_id'] = v.projectId;
    if (vc.isAdmin) {
      out['os-vol-mig-status-attr:migstat'] = v.migrationStatus;
      out['os-vol-mig-status-attr:name_id'] = null;
      out['os-vol-host-attr:host'] = v.host;
    }
    if (v.imageMetadata !== null) out.volume_image_metadata = { ...v.imageMetadata };
  }
  return out;
}

/** An element of a volume's `attachments` (note `id` is the volume id). */
function volumeAttachmentView(v: Volume, a: Attachment, isAdmin: boolean): Record<string, unknown> {
  return {
    id: v.id,
    attachment_id: a.id,
    volume_id: v.id,
    server_id: a.instanceUuid,
    host_name: isAdmin ? a.attachedHost : null,
    device: a.mountpoint,
    attached_at: cinderTime(a.attachTime),
  };
}

export function volumeSummaryView(v: Volume, vc: ViewContext): Record<string, unknown> {
  return { id: v.id, name: v.name, links: selfLinks(vc, 'volumes', v.id) };
}

/** Attachments API views: summary, and detail with `""` for unset times. */
export function attachmentView(a: Attachment, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: a.id,
    status: a.attachStatus,
    instance: a.instanceUuid,
    volume_id: a.volumeId,
  };
  if (!detail) return out;
  out.attached_at = cinderTime(a.attachTime) ?? '';
  out.detached_at = cinderTime(a.detachTime) ?? '';
  out.attach_mode = a.attachMode;
  out.connection_info = a.connectionInfo ?? {};
  return out;
}

/**
 * Snapshot views. `detail` adds the versioned keys; `extensions` (show and detail list only) the
 * `os-extended-snapshot-attributes:*` keys.
 */
export function snapshotView(
  s: Snapshot,
  vc: ViewContext,
  detail: boolean,
  extensions: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    created_at: cinderTime(s.createdAt),
    updated_at: cinderTime(s.updatedAt),
    name: s.name,
    description: s.description,
    volume_id: s.volumeId,
    status: s.status,
    size: s.size,
    metadata: { ...s.metadata },
  };
  if (detail) {
    if (atLeast(vc.mv, '3.14')) out.group_snapshot_id = s.groupSnapshotId;
    if (atLeast(vc.mv, '3.41')) out.user_id = s.userId;
    if (atLeast(vc.mv, '3.65')) out.consumes_quota = s.consumesQuota;
  }
  if (extensions) {
    out['os-extended-snapshot-attributes:project_id'] = s.projectId;
    out['os-extended-snapshot-attributes:progress'] = s.progress;
  }
  return out;
}

/** Extra specs a non-admin may see (Cinder's user-visible keys). */
const USER_VISIBLE_SPECS = new Set(['multiattach', 'RESKEY:availability_zones', 'replication_enabled']);

export function volumeTypeView(t: VolumeType, isAdmin: boolean): Record<string, unknown> {
  const specs = isAdmin
    ? { ...t.extraSpecs }
    : Object.fromEntries(Object.entries(t.extraSpecs).filter(([k]) => USER_VISIBLE_SPECS.has(k)));
  const out: Record<string, unknown> = {
    id: t.id,
    name: t.name,
    is_public: t.isPublic,
    description: t.description,
    extra_specs: specs,
  };
  if (isAdmin) out.qos_specs_id = null;
  out['os-volume-type-access:is_public'] = t.isPublic;
  return out;
}

export function messageView(m: UserMessage, vc: ViewContext): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: m.id,
    event_id: m.eventId,
    user_message: m.userMessage,
    message_level: m.messageLevel,
    created_at: cinderTime(m.createdAt),
    guaranteed_until: cinderTime(m.expiresAt),
    request_id: m.requestId,
    links: selfLinks(vc, 'messages', m.id),
  };
  if (m.resourceType) out.resource_type = m.resourceType;
  if (m.resourceUuid) out.resource_uuid = m.resourceUuid;
  return out;
}
