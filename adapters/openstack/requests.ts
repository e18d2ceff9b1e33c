/**
 * One function per Cinder or Nova wire operation. Each builds the path (urls.ts), query and
 * body, names its endpoint for metrics and its minimum microversion, and returns the wire shape.
 * Mapping to the unified model happens in backend.ts through results.ts.
 */
import type { CallOptions } from '../backend';
import type { OpenStackCall, OpenStackClient, OpenStackResult } from './client';
import { FEATURES } from './microversions';
import type { CinderAttachment, CinderMessage, CinderSnapshot, CinderVolume, NovaServer, NovaVolumeAttachment } from './results';
import * as u from './urls';

type Call = Omit<OpenStackCall, 'service'>;
const cinder = <T>(c: OpenStackClient, call: Call, o: CallOptions): Promise<OpenStackResult<T>> => c.call<T>({ service: 'volume', ...call }, o);
const nova = <T>(c: OpenStackClient, call: Call, o: CallOptions): Promise<OpenStackResult<T>> => c.call<T>({ service: 'compute', ...call }, o);
const short = (id: string): string => id.slice(0, 8);

// ---- Cinder volumes -------------------------------------------------------------------------

export interface ListQuery {
  limit: number;
  marker?: string;
  /** Exact-match filters Cinder applies (name, status …). */
  filters?: Record<string, string>;
  sort?: string;
}

export interface VolumeList {
  volumes: CinderVolume[];
  volumes_links?: Array<{ rel: string; href: string }>;
}

export function listVolumesDetail(c: OpenStackClient, q: ListQuery, o: CallOptions): Promise<OpenStackResult<VolumeList>> {
  const query = new URLSearchParams({ limit: String(q.limit), sort: q.sort ?? 'created_at:asc,id:asc' });
  if (q.marker) query.set('marker', q.marker);
  for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, v);
  return cinder(c, { method: 'GET', path: u.volumesDetailURL(), endpoint: 'GET /volumes/detail', query, action: 'listing volumes' }, o);
}

export function showVolume(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(c, { method: 'GET', path: u.volumeURL(id), endpoint: 'GET /volumes/:id', action: `reading volume ${id}` }, o);
}

/** Create body keys as Cinder names them; only set keys are sent (≥ 3.53 rejects unknown ones). */
export interface CreateVolumeBody {
  size?: number;
  name?: string;
  description?: string;
  volume_type?: string;
  availability_zone?: string;
  metadata?: Record<string, string>;
  snapshot_id?: string;
  source_volid?: string;
}

export function createVolume(c: OpenStackClient, body: CreateVolumeBody, o: CallOptions): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(c, { method: 'POST', path: u.volumesURL(), endpoint: 'POST /volumes', body: { volume: body }, action: `creating volume "${body.name ?? ''}"` }, o);
}

export function updateVolume(c: OpenStackClient, id: string, patch: { name?: string; description?: string; metadata?: Record<string, string> }, o: CallOptions): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(c, { method: 'PUT', path: u.volumeURL(id), endpoint: 'PUT /volumes/:id', body: { volume: patch }, action: `updating volume ${id}` }, o);
}

export function deleteVolume(c: OpenStackClient, id: string, opts: { cascade?: boolean; force?: boolean }, o: CallOptions): Promise<OpenStackResult<void>> {
  const query = new URLSearchParams();
  if (opts.cascade) query.set('cascade', 'true');
  if (opts.force) query.set('force', 'true');
  return cinder(c, {
    method: 'DELETE',
    path: u.volumeURL(id),
    endpoint: 'DELETE /volumes/:id',
    query,
    action: `deleting volume ${id}`,
    ...(opts.force ? { needs: FEATURES.volume.deleteForce, feature: 'a forced delete' } : {}),
  }, o);
}

/** `POST /volumes/{id}/action` with exactly one action key. */
export function volumeAction<T = unknown>(c: OpenStackClient, id: string, action: string, body: unknown, o: CallOptions, need?: { version: string; feature: string }): Promise<OpenStackResult<T>> {
  return cinder<T>(c, {
    method: 'POST',
    path: u.volumeActionURL(id),
    endpoint: `POST /volumes/:id/action ${action}`,
    body: { [action]: body },
    action: `${action} on volume ${short(id)}`,
    ...(need ? { needs: need.version, feature: need.feature } : {}),
  }, o);
}

// ---- Cinder snapshots -----------------------------------------------------------------------

export interface SnapshotList {
  snapshots: CinderSnapshot[];
  snapshots_links?: Array<{ rel: string; href: string }>;
}

export function listSnapshotsDetail(c: OpenStackClient, q: ListQuery, o: CallOptions): Promise<OpenStackResult<SnapshotList>> {
  const query = new URLSearchParams({ limit: String(q.limit), sort: q.sort ?? 'created_at:asc,id:asc' });
  if (q.marker) query.set('marker', q.marker);
  for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, v);
  return cinder(c, { method: 'GET', path: u.snapshotsDetailURL(), endpoint: 'GET /snapshots/detail', query, action: 'listing snapshots' }, o);
}

export function showSnapshot(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<{ snapshot: CinderSnapshot }>> {
  return cinder(c, { method: 'GET', path: u.snapshotURL(id), endpoint: 'GET /snapshots/:id', action: `reading snapshot ${id}` }, o);
}

export function createSnapshot(c: OpenStackClient, body: { volume_id: string; name?: string; description?: string; force?: boolean; metadata?: Record<string, string> }, o: CallOptions): Promise<OpenStackResult<{ snapshot: CinderSnapshot }>> {
  return cinder(c, { method: 'POST', path: u.snapshotsURL(), endpoint: 'POST /snapshots', body: { snapshot: body }, action: `snapshotting volume ${body.volume_id}` }, o);
}

export function deleteSnapshot(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<void>> {
  return cinder(c, { method: 'DELETE', path: u.snapshotURL(id), endpoint: 'DELETE /snapshots/:id', action: `deleting snapshot ${id}` }, o);
}

// ---- Cinder attachments API (≥ 3.27) --------------------------------------------------------

const ATTACHMENTS = { needs: FEATURES.volume.attachmentsApi, feature: "Cinder's attachments API" };

export function createAttachment(c: OpenStackClient, body: { volume_uuid: string; instance_uuid?: string; connector?: Record<string, unknown>; mode?: 'rw' | 'ro' }, o: CallOptions): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  const need = body.mode ? { needs: FEATURES.volume.attachmentMode, feature: 'an attachment mode' } : ATTACHMENTS;
  return cinder(c, { method: 'POST', path: u.attachmentsURL(), endpoint: 'POST /attachments', body: { attachment: body }, action: `attaching volume ${body.volume_uuid}`, ...need }, o);
}

export function updateAttachment(c: OpenStackClient, id: string, connector: Record<string, unknown>, o: CallOptions): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  return cinder(c, { method: 'PUT', path: u.attachmentURL(id), endpoint: 'PUT /attachments/:id', body: { attachment: { connector } }, action: `updating attachment ${id}`, ...ATTACHMENTS }, o);
}

export function completeAttachment(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<void>> {
  return cinder(c, {
    method: 'POST',
    path: u.attachmentActionURL(id),
    endpoint: 'POST /attachments/:id/action os-complete',
    body: { 'os-complete': {} },
    action: `completing attachment ${id}`,
    needs: FEATURES.volume.attachmentComplete,
    feature: 'completing an attachment',
  }, o);
}

export function deleteAttachment(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<{ attachments: CinderAttachment[] }>> {
  return cinder(c, { method: 'DELETE', path: u.attachmentURL(id), endpoint: 'DELETE /attachments/:id', action: `deleting attachment ${id}`, ...ATTACHMENTS }, o);
}

export function showAttachment(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  return cinder(c, { method: 'GET', path: u.attachmentURL(id), endpoint: 'GET /attachments/:id', action: `reading attachment ${id}`, ...ATTACHMENTS }, o);
}

/** The attachments list has no links: the caller pages with limit/marker and stops on a short page. */
export function listAttachmentsDetail(c: OpenStackClient, q: ListQuery, o: CallOptions): Promise<OpenStackResult<{ attachments: CinderAttachment[] }>> {
  const query = new URLSearchParams({ limit: String(q.limit), sort: q.sort ?? 'created_at:asc,id:asc' });
  if (q.marker) query.set('marker', q.marker);
  for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, v);
  return cinder(c, { method: 'GET', path: u.attachmentsDetailURL(), endpoint: 'GET /attachments/detail', query, action: 'listing attachments', ...ATTACHMENTS }, o);
}

/** User messages about one resource, newest first (≥ 3.3). */
export function listMessages(c: OpenStackClient, resourceId: string, o: CallOptions): Promise<OpenStackResult<{ messages: CinderMessage[] }>> {
  const query = new URLSearchParams({ resource_uuid: resourceId, sort: 'created_at:desc', limit: '5' });
  return cinder(c, { method: 'GET', path: u.messagesURL(), endpoint: 'GET /messages', query, action: `reading messages of ${resourceId}`, needs: FEATURES.volume.messages, feature: 'user messages' }, o);
}

// ---- Nova -----------------------------------------------------------------------------------

export function showServer(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<{ server: NovaServer }>> {
  return nova(c, { method: 'GET', path: u.serverURL(id), endpoint: 'GET /servers/:id', action: `reading server ${id}` }, o);
}

export function listServersDetail(c: OpenStackClient, q: { limit: number; marker?: string }, o: CallOptions): Promise<OpenStackResult<{ servers: NovaServer[]; servers_links?: Array<{ rel: string; href: string }> }>> {
  const query = new URLSearchParams({ limit: String(q.limit) });
  if (q.marker) query.set('marker', q.marker);
  return nova(c, { method: 'GET', path: u.serversDetailURL(), endpoint: 'GET /servers/detail', query, action: 'listing servers' }, o);
}

export function listServerVolumeAttachments(c: OpenStackClient, serverId: string, q: { limit?: number; offset?: number }, o: CallOptions): Promise<OpenStackResult<{ volumeAttachments: NovaVolumeAttachment[] }>> {
  const query = new URLSearchParams();
  if (q.limit !== undefined) query.set('limit', String(q.limit));
  if (q.offset !== undefined) query.set('offset', String(q.offset));
  return nova(c, { method: 'GET', path: u.serverVolumeAttachmentsURL(serverId), endpoint: 'GET /servers/:id/os-volume_attachments', query, action: `listing volume attachments of server ${serverId}` }, o);
}

export function showServerVolumeAttachment(c: OpenStackClient, serverId: string, volumeId: string, o: CallOptions): Promise<OpenStackResult<{ volumeAttachment: NovaVolumeAttachment }>> {
  return nova(c, { method: 'GET', path: u.serverVolumeAttachmentURL(serverId, volumeId), endpoint: 'GET /servers/:id/os-volume_attachments/:volume', action: `reading the attachment of volume ${volumeId} to server ${serverId}` }, o);
}

export interface NovaAttachBody {
  volumeId: string;
  device?: string;
  tag?: string;
  delete_on_termination?: boolean;
}

/** ≤ 2.100: 200 with the attachment; ≥ 2.101: 202 and no body. */
export function attachServerVolume(c: OpenStackClient, serverId: string, body: NovaAttachBody, o: CallOptions): Promise<OpenStackResult<{ volumeAttachment: NovaVolumeAttachment }>> {
  const need =
    body.delete_on_termination !== undefined
      ? { needs: FEATURES.compute.deleteOnTermination, feature: 'deleteOnTermination' }
      : body.tag !== undefined
        ? { needs: FEATURES.compute.attachTag, feature: 'a device tag' }
        : {};
  return nova(c, { method: 'POST', path: u.serverVolumeAttachmentsURL(serverId), endpoint: 'POST /servers/:id/os-volume_attachments', body: { volumeAttachment: body }, action: `attaching volume ${body.volumeId} to server ${serverId}`, ...need }, o);
}

/** 202, no body. Below 2.85 only a swap (`volumeId` ≠ current) is allowed. */
export function updateServerVolumeAttachment(c: OpenStackClient, serverId: string, volumeId: string, body: { volumeId: string; delete_on_termination?: boolean }, o: CallOptions): Promise<OpenStackResult<void>> {
  const need = body.delete_on_termination !== undefined ? { needs: FEATURES.compute.updateNonSwap, feature: 'changing deleteOnTermination' } : {};
  return nova(c, { method: 'PUT', path: u.serverVolumeAttachmentURL(serverId, volumeId), endpoint: 'PUT /servers/:id/os-volume_attachments/:volume', body: { volumeAttachment: body }, action: `updating the attachment of volume ${volumeId} to server ${serverId}`, ...need }, o);
}

export function detachServerVolume(c: OpenStackClient, serverId: string, volumeId: string, o: CallOptions): Promise<OpenStackResult<void>> {
  return nova(c, { method: 'DELETE', path: u.serverVolumeAttachmentURL(serverId, volumeId), endpoint: 'DELETE /servers/:id/os-volume_attachments/:volume', action: `detaching volume ${volumeId} from server ${serverId}` }, o);
}
