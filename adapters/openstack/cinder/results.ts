/**
 * Cinder wire shapes and their mapping to the unified model, with the status tables
 * (docs/openstack.md shows the same tables), and the facts completion rules evaluate. Fields vary
 * by microversion and by the caller's role, so every optional key is read defensively. No other
 * file reads a Cinder wire field.
 */
import type { CinderActionResult, CinderVolumeMigrationStatus } from '../actions/types';
import { sortedPairs } from '../../contract/key-values';
import type { Attachment, AttachmentState, Snapshot, Volume, VolumeStatus } from '../../contract/model';
import { hostConsumer, serverConsumer, type CinderVolumeDetails, type CinderVolumeStatus } from '../model';

export const GIB = 1024 ** 3;

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
  /** Admin only. */
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
  resource_uuid?: string | null;
  request_id?: string;
  created_at: string;
}

export interface Links {
  rel: string;
  href: string;
}

/** Cinder's status words, one per {@link CinderVolumeStatus} (`OTHER` stands for any other word). */
export const CINDER_STATUS_WORDS: Readonly<Record<Exclude<CinderVolumeStatus, 'OTHER'>, string>> = {
  CREATING: 'creating',
  AVAILABLE: 'available',
  RESERVED: 'reserved',
  ATTACHING: 'attaching',
  DETACHING: 'detaching',
  IN_USE: 'in-use',
  MAINTENANCE: 'maintenance',
  DELETING: 'deleting',
  AWAITING_TRANSFER: 'awaiting-transfer',
  ERROR: 'error',
  ERROR_DELETING: 'error_deleting',
  BACKING_UP: 'backing-up',
  RESTORING_BACKUP: 'restoring-backup',
  ERROR_BACKING_UP: 'error_backing-up',
  ERROR_RESTORING: 'error_restoring',
  ERROR_EXTENDING: 'error_extending',
  DOWNLOADING: 'downloading',
  UPLOADING: 'uploading',
  RETYPING: 'retyping',
  EXTENDING: 'extending',
  ERROR_MANAGING: 'error_managing',
  MANAGING: 'managing',
  REVERTING: 'reverting',
};

/** Cinder's `migration_status` words, one per {@link CinderVolumeMigrationStatus}. */
export const MIGRATION_STATUS_WORDS: Readonly<Record<CinderVolumeMigrationStatus, string>> = {
  MIGRATING: 'migrating',
  ERROR: 'error',
  SUCCESS: 'success',
  COMPLETING: 'completing',
  NONE: 'none',
  STARTING: 'starting',
};

const reverse = <K extends string>(t: Readonly<Record<K, string>>): ReadonlyMap<string, K> =>
  new Map(Object.entries(t).map(([k, w]) => [w as string, k as K]));
const CINDER_STATUS = reverse(CINDER_STATUS_WORDS);
const MIGRATION_STATUS = reverse(MIGRATION_STATUS_WORDS);

/** A Cinder status word → {@link CinderVolumeStatus}; `OTHER` for a word this gateway does not know. */
export const cinderStatus = (word: string): CinderVolumeStatus => CINDER_STATUS.get(word) ?? 'OTHER';

/** Cinder `status` → unified status. Words not listed map to UNKNOWN. */
export const VOLUME_STATUS: Readonly<Record<string, VolumeStatus>> = {
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
export const ATTACHMENT_STATE: Readonly<Record<string, AttachmentState>> = {
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

/** The token of the page after `items` when Cinder links one (the last id), else null. */
export const nextMarker = (items: ReadonlyArray<{ id: string }>, links: Links[] | undefined): string | null =>
  links?.some((l) => l.rel === 'next') && items.length > 0 ? items[items.length - 1]!.id : null;

/** A Cinder volume (list detail or show) → unified volume, complete (Cinder has no stubs). */
export function toVolume(backend: string, projectId: string, v: CinderVolume): Volume<CinderVolumeDetails> {
  const ref = { backend, namespace: v['os-vol-tenant-attr:tenant_id'] ?? projectId, nativeId: v.id };
  // While Cinder is detaching, the attachments it still lists are on their way out.
  const state: AttachmentState = v.status === 'detaching' ? 'DETACHING' : 'ATTACHED';
  // Cinder shows the `attached_mode` admin metadata in `metadata` while a volume is attached.
  const access = v.metadata?.attached_mode === 'ro' ? 'READ_ONLY' : 'READ_WRITE';
  const attachments: Attachment[] = (v.attachments ?? []).map((a) => ({
    __typename: 'VolumeAttachment',
    volume: ref,
    consumerId: a.server_id ?? a.attachment_id,
    state,
    backendState: 'attached',
    stateReason: null,
    access,
    consumer: a.server_id ? serverConsumer(a.server_id, backend) : hostConsumer(a.host_name),
    device: a.device,
    attachedAt: isoTime(a.attached_at),
    nativeId: a.attachment_id,
    tag: null,
    deleteOnTermination: null,
  }));
  return {
    __typename: 'Volume',
    ref,
    name: v.name ?? '',
    status: VOLUME_STATUS[v.status] ?? 'UNKNOWN',
    backendStatus: v.status,
    sizeBytes: v.size * GIB,
    createdAt: isoTime(v.created_at),
    updatedAt: isoTime(v.updated_at),
    complete: true,
    attachments,
    details: {
      __typename: 'CinderVolumeDetails',
      cinderStatus: cinderStatus(v.status),
      sizeGiB: v.size,
      description: v.description ?? null,
      volumeType: v.volume_type ?? null,
      availabilityZone: v.availability_zone ?? null,
      bootable: v.bootable === true || v.bootable === 'true',
      encrypted: v.encrypted === true,
      multiattach: v.multiattach === true,
      metadata: sortedPairs(v.metadata),
      imageMetadata: sortedPairs(v.volume_image_metadata),
      migrationStatus: v.migration_status ?? null,
      replicationStatus: v.replication_status ?? null,
      userId: v.user_id ?? null,
      snapshotId: v.snapshot_id ?? null,
      sourceVolumeId: v.source_volid ?? null,
    },
  };
}

export function toSnapshot(backend: string, projectId: string, s: CinderSnapshot): Snapshot {
  const scope = s['os-extended-snapshot-attributes:project_id'] ?? projectId;
  return {
    __typename: 'VolumeSnapshot',
    backend,
    scope,
    nativeId: s.id,
    name: s.name ?? null,
    pluginId: null,
    sourceExternalVolumeId: null,
    sourceVolume: { backend, namespace: scope, nativeId: s.volume_id },
    sizeBytes: s.size * GIB,
    createdAt: isoTime(s.created_at),
    ready: s.status === 'available',
    backendStatus: s.status,
    description: s.description ?? null,
  };
}

/** Who holds an attachments-API record: its Cinder id, and the Nova server it was made for (null for a host). */
export const attachmentHolder = (a: CinderAttachment): { id: string; serverId: string | null } => ({
  id: a.id.toLowerCase(),
  serverId: a.instance ? a.instance.toLowerCase() : null,
});

/** An attachments-API record → unified attachment (connection_info is dropped here, always). */
export function toHostAttachment(backend: string, projectId: string, a: CinderAttachment): Attachment {
  return {
    __typename: 'VolumeAttachment',
    volume: { backend, namespace: projectId, nativeId: a.volume_id },
    consumerId: a.instance ?? a.id,
    state: ATTACHMENT_STATE[a.status] ?? 'ERROR',
    backendState: a.status,
    stateReason: ATTACHMENT_STATE[a.status] ? null : `Cinder reports the attachment as "${a.status}"`,
    access: a.attach_mode === 'ro' ? 'READ_ONLY' : 'READ_WRITE',
    consumer: a.instance ? serverConsumer(a.instance, backend) : hostConsumer(null),
    device: null,
    attachedAt: isoTime(a.attached_at),
    nativeId: a.id,
    tag: null,
    deleteOnTermination: null,
  };
}

// ---- facts for completion rules ------------------------------------------------------------

/** What completion rules need of a volume, in the gateway's words. */
export interface VolumeFacts {
  status: CinderVolumeStatus;
  /** Cinder's own word (reported as the operation's backend status). */
  backendStatus: string;
  sizeGiB: number;
  /** Null for non-admins, who do not see it. */
  migration: CinderVolumeMigrationStatus | null;
  /** Servers Cinder lists the volume attached to. */
  serverIds: string[];
  /** Cinder attachment ids of the attached attachments. */
  attachmentIds: string[];
}

export const toVolumeFacts = (v: CinderVolume): VolumeFacts => ({
  status: cinderStatus(v.status),
  backendStatus: v.status,
  sizeGiB: v.size,
  migration: v.migration_status ? (MIGRATION_STATUS.get(v.migration_status) ?? null) : null,
  serverIds: (v.attachments ?? []).flatMap((a) => (a.server_id ? [a.server_id.toLowerCase()] : [])),
  attachmentIds: (v.attachments ?? []).map((a) => a.attachment_id.toLowerCase()),
});

/** A snapshot's phase, for completion rules. */
export type SnapshotPhase = 'CREATING' | 'AVAILABLE' | 'DELETING' | 'ERROR' | 'ERROR_DELETING' | 'OTHER';

export interface SnapshotFacts {
  phase: SnapshotPhase;
  backendStatus: string;
}

const SNAPSHOT_PHASE: Readonly<Record<string, SnapshotPhase>> = {
  creating: 'CREATING',
  available: 'AVAILABLE',
  deleting: 'DELETING',
  error: 'ERROR',
  error_deleting: 'ERROR_DELETING',
};

export const toSnapshotFacts = (s: CinderSnapshot): SnapshotFacts => ({
  phase: SNAPSHOT_PHASE[s.status] ?? 'OTHER',
  backendStatus: s.status,
});

/** A Cinder user message: what Cinder tells the project about a failed asynchronous step. */
export interface MessageFacts {
  /** e.g. `extend volume:Volume Driver failed to extend volume.` */
  text: string;
  createdAt: string | null;
}

export const toMessageFacts = (m: CinderMessage): MessageFacts => ({
  text: m.user_message,
  createdAt: isoTime(m.created_at),
});

// ---- volume action answers ------------------------------------------------------------------

/** `os-set_image_metadata` / `os-show_image_metadata` answer → all image metadata. */
export const toImageMetadata = (data: unknown): CinderActionResult => ({
  imageMetadata: sortedPairs((data as { metadata?: Record<string, string> } | undefined)?.metadata),
});

/** `os-migrate_volume_completion` answer → the id Cinder kept. */
export const toSavedVolume = (data: unknown): CinderActionResult => {
  const id = (data as { save_volume_id?: string } | undefined)?.save_volume_id;
  return id ? { savedVolumeId: id } : {};
};

/** `os-volume_upload_image` answer → the Glance image being created. */
export function toUploadedImage(data: unknown): CinderActionResult {
  const img = (
    data as
      | {
          'os-volume_upload_image'?: {
            image_id: string;
            image_name: string;
            disk_format?: string;
            container_format?: string;
          };
        }
      | undefined
  )?.['os-volume_upload_image'];
  return img
    ? {
        image: {
          id: img.image_id,
          name: img.image_name,
          diskFormat: img.disk_format ?? null,
          containerFormat: img.container_format ?? null,
        },
      }
    : {};
}

/** `os-initialize_connection` answer → the driver's connection info (secret-bearing; never logged). */
export const toConnectionInfo = (data: unknown): CinderActionResult => ({
  connectionInfo: (data as { connection_info?: unknown } | undefined)?.connection_info ?? null,
});
