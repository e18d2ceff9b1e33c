/**
 * Cinder and Nova wire shapes and their mapping to the unified model, with the status tables
 * (docs/openstack.md shows the same tables). Fields vary by microversion and by the caller's
 * role, so every optional key is read defensively.
 */
import type {
  Attachment,
  AttachmentState,
  KeyValue,
  OpenStackServer,
  ServerVolumeAttachment,
  Snapshot,
  Volume,
  VolumeStatus,
} from '../model';

const GiB = 1024 ** 3;

/** An element of a Cinder volume's `attachments` (only `attached` ones are listed). */
export interface CinderVolumeAttachment {
  id: string;
  attachment_id: string;
  volume_id: string;
  server_id: string | null;
  host_name: string | null;
  device: string | null;
  attached_at: string | null;
}

export interface CinderVolume {
  id: string;
  status: string;
  size: number;
  availability_zone?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  name?: string | null;
  description?: string | null;
  volume_type?: string | null;
  snapshot_id?: string | null;
  source_volid?: string | null;
  metadata?: Record<string, string>;
  user_id?: string | null;
  /** A string "true"/"false" on the wire. */
  bootable?: string | boolean;
  encrypted?: boolean;
  multiattach?: boolean;
  replication_status?: string | null;
  migration_status?: string | null;
  attachments?: CinderVolumeAttachment[];
  volume_image_metadata?: Record<string, string>;
  'os-vol-tenant-attr:tenant_id'?: string;
}

export interface CinderSnapshot {
  id: string;
  status: string;
  size: number;
  volume_id: string;
  name?: string | null;
  description?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  metadata?: Record<string, string>;
  'os-extended-snapshot-attributes:project_id'?: string;
}

/** Attachments API detail (≥ 3.27). */
export interface CinderAttachment {
  id: string;
  status: string;
  instance: string | null;
  volume_id: string;
  attached_at?: string;
  detached_at?: string;
  /** "rw", "ro" or the literal string "null". */
  attach_mode?: string;
  /** Secret-bearing: never mapped into the model. */
  connection_info?: unknown;
}

export interface CinderMessage {
  id: string;
  event_id: string;
  user_message: string;
  message_level: string;
  resource_type: string;
  resource_uuid: string | null;
  created_at: string;
}

export interface NovaServer {
  id: string;
  name: string;
  status: string;
  tenant_id?: string;
  created?: string;
  'OS-EXT-STS:vm_state'?: string;
  'os-extended-volumes:volumes_attached'?: Array<{ id: string; delete_on_termination?: boolean }>;
}

/** `volumeAttachment` element; keys vary by microversion (backends.md 3.2). */
export interface NovaVolumeAttachment {
  id?: string;
  volumeId: string;
  serverId: string;
  device?: string | null;
  tag?: string | null;
  delete_on_termination?: boolean;
  attachment_id?: string;
  bdm_uuid?: string;
}

/** Cinder `status` → unified status. Values not listed map to UNKNOWN. */
export const VOLUME_STATUS: Record<string, VolumeStatus> = {
  creating: 'CREATING',
  managing: 'CREATING',
  available: 'AVAILABLE',
  reserved: 'RESERVED',
  attaching: 'ATTACHING',
  'in-use': 'IN_USE',
  detaching: 'DETACHING',
  extending: 'EXTENDING',
  deleting: 'DELETING',
  unmanaging: 'DELETING',
  error_managing_deleting: 'DELETING',
  maintenance: 'MAINTENANCE',
  retyping: 'BUSY',
  uploading: 'BUSY',
  downloading: 'BUSY',
  'backing-up': 'BUSY',
  'restoring-backup': 'BUSY',
  reverting: 'BUSY',
  'awaiting-transfer': 'BUSY',
  error: 'ERROR',
  error_deleting: 'ERROR',
  error_managing: 'ERROR',
  error_restoring: 'ERROR',
  'error_backing-up': 'ERROR',
  error_extending: 'ERROR',
};

/** Cinder attachment `status` (attach_status) → unified attachment state. */
export const ATTACHMENT_STATE: Record<string, AttachmentState> = {
  reserved: 'ATTACHING',
  attaching: 'ATTACHING',
  attached: 'ATTACHED',
  detaching: 'DETACHING',
  detached: 'DETACHED',
  deleted: 'DETACHED',
  error_attaching: 'ERROR',
  error_detaching: 'ERROR',
};

/** Cinder datetimes are naive UTC ("2018-11-29T06:50:07.770785"); attachments use "" for unset. */
export function isoTime(t: string | null | undefined): string | null {
  if (!t) return null;
  return /[zZ]|[+-]\d\d:\d\d$/.test(t) ? t : `${t}Z`;
}

const pairs = (o: Record<string, string> | undefined): KeyValue[] =>
  Object.entries(o ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value: String(value) }));

export function volumeStatus(status: string): VolumeStatus {
  return VOLUME_STATUS[status] ?? 'UNKNOWN';
}

/** A Cinder volume (list detail or show) → unified volume, complete (Cinder has no stubs). */
export function toVolume(backend: string, projectId: string, v: CinderVolume): Volume {
  const ref = { backend, namespace: v['os-vol-tenant-attr:tenant_id'] ?? projectId, nativeId: v.id };
  const multiattach = v.multiattach === true;
  // While Cinder is detaching, the attachments it still lists are on their way out.
  const attachmentState: AttachmentState = v.status === 'detaching' ? 'DETACHING' : 'ATTACHED';
  const attachments: Attachment[] = (v.attachments ?? []).map((a) => ({
    volume: ref,
    consumerId: a.attachment_id,
    state: attachmentState,
    backendState: 'attached',
    access: 'READ_WRITE',
    consumer: a.server_id ? { kind: 'OpenStackServer', id: a.server_id } : { kind: 'OpenStackHost', hostName: a.host_name },
    placement: { device: a.device, attachedAt: isoTime(a.attached_at) },
  }));
  const az = v.availability_zone ?? null;
  return {
    ref,
    externalId: null,
    name: v.name ?? '',
    status: volumeStatus(v.status),
    backendStatus: v.status,
    accessMode: attachments.length === 0 ? null : multiattach ? 'MULTI_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER',
    attachmentMode: attachments.length === 0 ? null : 'BLOCK_DEVICE',
    topologies: az ? [{ segments: [{ key: 'availability_zone', value: az }] }] : [],
    schedulable: null,
    pluginId: null,
    provider: 'cinder',
    controllerRequired: null,
    controllers: null,
    nodes: null,
    currentReaders: 0,
    currentWriters: attachments.length,
    createIndex: null,
    modifyIndex: null,
    createTime: isoTime(v.created_at),
    modifyTime: isoTime(v.updated_at),
    detail: {
      capacityBytes: v.size * GiB,
      requestedCapacityMinBytes: null,
      requestedCapacityMaxBytes: null,
      requestedCapabilities: [{ accessMode: multiattach ? 'MULTI_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER', attachmentMode: 'BLOCK_DEVICE' }],
      requestedTopologies: null,
      providerVersion: null,
      mountOptions: null,
      parameters: [],
      context: [],
      cloneId: v.source_volid ?? null,
      snapshotId: v.snapshot_id ?? null,
      attachments,
    },
    openstack: {
      sizeGiB: v.size,
      description: v.description ?? null,
      volumeType: v.volume_type ?? null,
      availabilityZone: az,
      bootable: v.bootable === true || v.bootable === 'true',
      encrypted: v.encrypted === true,
      multiattach,
      metadata: pairs(v.metadata),
      imageMetadata: pairs(v.volume_image_metadata),
      migrationStatus: v.migration_status ?? null,
      replicationStatus: v.replication_status ?? null,
      userId: v.user_id ?? null,
    },
  };
}

export function toSnapshot(backend: string, projectId: string, s: CinderSnapshot): Snapshot {
  const scope = s['os-extended-snapshot-attributes:project_id'] ?? projectId;
  return {
    backend,
    scope,
    nativeId: s.id,
    name: s.name ?? null,
    pluginId: null,
    sourceExternalVolumeId: null,
    sizeBytes: s.size * GiB,
    createTime: isoTime(s.created_at),
    ready: s.status === 'available',
    sourceVolume: { backend, namespace: scope, nativeId: s.volume_id },
    backendStatus: s.status,
    description: s.description ?? null,
  };
}

/** An attachments-API record → unified attachment (connection_info is dropped here, always). */
export function toHostAttachment(backend: string, projectId: string, a: CinderAttachment): Attachment {
  return {
    volume: { backend, namespace: projectId, nativeId: a.volume_id },
    consumerId: a.id,
    state: ATTACHMENT_STATE[a.status] ?? 'ERROR',
    backendState: a.status,
    access: a.attach_mode === 'ro' ? 'READ_ONLY' : 'READ_WRITE',
    consumer: a.instance ? { kind: 'OpenStackServer', id: a.instance } : { kind: 'OpenStackHost', hostName: null },
    placement: { device: null, attachedAt: isoTime(a.attached_at) },
  };
}

export function toServer(backend: string, projectId: string, s: NovaServer): OpenStackServer {
  return {
    backend,
    projectId: s.tenant_id ?? projectId,
    id: s.id,
    name: s.name,
    status: s.status,
    vmState: s['OS-EXT-STS:vm_state'] ?? null,
    volumeIds: (s['os-extended-volumes:volumes_attached'] ?? []).map((v) => v.id),
    createTime: s.created ?? null,
  };
}

export function toServerVolumeAttachment(backend: string, projectId: string, a: NovaVolumeAttachment): ServerVolumeAttachment {
  return {
    backend,
    projectId,
    serverId: a.serverId,
    volumeId: a.volumeId,
    device: a.device ?? null,
    tag: a.tag ?? null,
    deleteOnTermination: a.delete_on_termination ?? null,
    attachmentId: a.attachment_id ?? null,
  };
}

export const bytesToGiB = (bytes: number): number => bytes / GiB;
export const GIB = GiB;
