/**
 * The shared cloud state's records, as the services store them (not as they render them: the
 * views in cinder/views.ts and nova/servers.ts do that). Times are µs since the epoch.
 */

/** Keystone roles the simulator knows; `service` marks service users (X-Service-Token). */
export type Role = 'admin' | 'member' | 'reader' | 'service';

export const ROLES: readonly Role[] = ['admin', 'member', 'reader', 'service'];

export interface Project {
  id: string;
  name: string;
  domainId: string;
}

export interface User {
  id: string;
  name: string;
  password: string;
  domainId: string;
  /** Password auth without a scope is scoped to this project (Keystone's default_project_id). */
  defaultProjectId: string | null;
  /** Direct role assignments, by project id. */
  roles: Map<string, Role[]>;
}

export interface ApplicationCredential {
  id: string;
  name: string;
  secret: string;
  userId: string;
  projectId: string;
  roles: Role[];
}

export interface Token {
  id: string;
  userId: string;
  /** null for an unscoped token. */
  projectId: string | null;
  /** Effective roles (implied roles expanded for password tokens). */
  roles: Role[];
  methods: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  appCred: { id: string; name: string } | null;
  revoked: boolean;
}

export interface VolumeType {
  id: string;
  name: string;
  description: string | null;
  isPublic: boolean;
  extraSpecs: Record<string, string>;
}

/** Cinder attach_status values of an attachment row. */
export type AttachStatus =
  'attached' | 'attaching' | 'detached' | 'reserved' | 'error_attaching' | 'error_detaching' | 'deleted';

export interface Attachment {
  id: string;
  volumeId: string;
  instanceUuid: string | null;
  attachedHost: string | null;
  mountpoint: string | null;
  attachTime: number | null;
  detachTime: number | null;
  /** 'rw' | 'ro' | 'null' (the literal string Cinder stores when never set). */
  attachMode: string;
  attachStatus: AttachStatus;
  /** null until a connector was given (rendered `{}`). */
  connectionInfo: Record<string, unknown> | null;
  connector: Record<string, unknown> | null;
  createdAt: number;
}

export interface Volume {
  id: string;
  projectId: string;
  userId: string;
  name: string | null;
  description: string | null;
  size: number;
  status: string;
  previousStatus: string | null;
  availabilityZone: string;
  volumeTypeId: string;
  snapshotId: string | null;
  sourceVolid: string | null;
  /** User metadata, in insertion order. */
  metadata: Record<string, string>;
  /** Admin metadata (readonly, attached_mode, …); readonly/attached_mode are shown in `metadata`. */
  adminMetadata: Record<string, string>;
  /** Glance image metadata (volume_image_metadata), null when the volume has none. */
  imageMetadata: Record<string, string> | null;
  bootable: boolean;
  host: string;
  migrationStatus: string | null;
  replicationStatus: string | null;
  groupId: string | null;
  providerId: string | null;
  encryptionKeyId: string | null;
  consumesQuota: boolean;
  /** Attachment rows, in creation order (deleted rows are removed). */
  attachments: Attachment[];
  createdAt: number;
  updatedAt: number | null;
}

export interface Snapshot {
  id: string;
  projectId: string;
  userId: string;
  volumeId: string;
  name: string | null;
  description: string | null;
  status: string;
  size: number;
  metadata: Record<string, string>;
  progress: string;
  groupSnapshotId: string | null;
  consumesQuota: boolean;
  createdAt: number;
  updatedAt: number | null;
}

/** A Cinder user message (GET /v3/{p}/messages). */
export interface UserMessage {
  id: string;
  projectId: string;
  requestId: string;
  resourceType: string;
  resourceUuid: string | null;
  /** e.g. VOLUME_VOLUME_007_010 */
  eventId: string;
  userMessage: string;
  messageLevel: string;
  createdAt: number;
  expiresAt: number;
}

/** A Nova block device mapping of a volume. */
export interface Bdm {
  uuid: string;
  volumeId: string;
  attachmentId: string | null;
  deviceName: string | null;
  tag: string | null;
  deleteOnTermination: boolean;
  /** 0 for the root disk. */
  bootIndex: number | null;
  createdAt: number;
}

export interface Server {
  id: string;
  projectId: string;
  userId: string;
  name: string;
  vmState: string;
  taskState: string | null;
  powerState: number;
  locked: boolean;
  availabilityZone: string;
  hostId: string;
  imageId: string | null;
  metadata: Record<string, string>;
  bdms: Bdm[];
  createdAt: number;
  updatedAt: number;
  launchedAt: number | null;
  /** Device prefix for new attachments (`/dev/sd`, `/dev/vd`). */
  devicePrefix: string;
}
