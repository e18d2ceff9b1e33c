/**
 * One function per Nova wire operation. Each takes typed neutral input, builds the path
 * (`urls.ts`), query and body, names its endpoint for metrics and its minimum microversion, and
 * returns the wire shape (`results.ts` maps it). No other file writes a Nova wire key.
 */
import type { AttachTarget } from '../../contract/call-inputs';
import type { CallOptions } from '../../contract/call-options';
import type { OpenStackCall, OpenStackClient, OpenStackResult } from '../client';
import { FEATURES } from '../microversions';
import type { Links, NovaInstanceAction, NovaServerView, NovaVolumeAttachment } from './results';
import * as u from './urls';

type Call = Omit<OpenStackCall, 'service'>;
const nova = <T>(c: OpenStackClient, call: Call, o: CallOptions): Promise<OpenStackResult<T>> =>
  c.call<T>({ service: 'compute', ...call }, o);

export function showServer(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ server: NovaServerView }>> {
  return nova(
    c,
    { method: 'GET', path: u.serverURL(id), endpoint: 'GET /servers/:id', action: `reading server ${id}` },
    o,
  );
}

/** One page of servers with details; `allProjects` (admins only) lists every project's (`all_tenants`). */
export function listServersDetail(
  c: OpenStackClient,
  q: { limit: number; marker?: string; allProjects?: boolean },
  o: CallOptions,
): Promise<OpenStackResult<{ servers: NovaServerView[]; servers_links?: Links[] }>> {
  const query = new URLSearchParams({ limit: String(q.limit) });
  if (q.marker) query.set('marker', q.marker);
  if (q.allProjects) query.set('all_tenants', '1');
  return nova(
    c,
    { method: 'GET', path: u.serversDetailURL(), endpoint: 'GET /servers/detail', query, action: 'listing servers' },
    o,
  );
}

export function listServerVolumeAttachments(
  c: OpenStackClient,
  serverId: string,
  o: CallOptions,
): Promise<OpenStackResult<{ volumeAttachments: NovaVolumeAttachment[] }>> {
  return nova(
    c,
    {
      method: 'GET',
      path: u.serverVolumeAttachmentsURL(serverId),
      endpoint: 'GET /servers/:id/os-volume_attachments',
      action: `listing volume attachments of server ${serverId}`,
    },
    o,
  );
}

type ServerTarget = Extract<AttachTarget, { kind: 'server' }>;

/** The attach body: only given options are sent (Nova rejects unknown keys). */
export function attachBody(volumeId: string, t: ServerTarget): Record<string, unknown> {
  const body: Record<string, unknown> = { volumeId };
  if (t.device !== undefined) body.device = t.device;
  if (t.tag !== undefined) body.tag = t.tag;
  if (t.deleteOnTermination !== undefined) body.delete_on_termination = t.deleteOnTermination;
  return { volumeAttachment: body };
}

/** ≤ 2.100: 200 with the attachment; ≥ 2.101: 202 and no body. */
export function attachServerVolume(
  c: OpenStackClient,
  volumeId: string,
  t: ServerTarget,
  o: CallOptions,
): Promise<OpenStackResult<{ volumeAttachment: NovaVolumeAttachment }>> {
  const need =
    t.deleteOnTermination !== undefined
      ? { needs: FEATURES.compute.deleteOnTermination, feature: 'deleteOnTermination' }
      : t.tag !== undefined
        ? { needs: FEATURES.compute.attachTag, feature: 'a device tag' }
        : {};
  const call: Call = {
    method: 'POST',
    path: u.serverVolumeAttachmentsURL(t.serverId),
    endpoint: 'POST /servers/:id/os-volume_attachments',
    body: attachBody(volumeId, t),
    action: `attaching volume ${volumeId} to server ${t.serverId}`,
  };
  return nova(c, { ...call, ...need }, o);
}

/** A change of a server's volume attachment: swap to `newVolumeId` and/or set deleteOnTermination. */
export interface AttachmentChange {
  newVolumeId?: string;
  deleteOnTermination?: boolean;
}

export function updateAttachmentBody(volumeId: string, change: AttachmentChange): Record<string, unknown> {
  const body: Record<string, unknown> = { volumeId: change.newVolumeId ?? volumeId };
  if (change.deleteOnTermination !== undefined) body.delete_on_termination = change.deleteOnTermination;
  return { volumeAttachment: body };
}

/** 202, no body. Below 2.85 only a swap is allowed. */
export function updateServerVolumeAttachment(
  c: OpenStackClient,
  serverId: string,
  volumeId: string,
  change: AttachmentChange,
  o: CallOptions,
): Promise<OpenStackResult<void>> {
  const need =
    change.deleteOnTermination !== undefined
      ? { needs: FEATURES.compute.updateNonSwap, feature: 'changing deleteOnTermination' }
      : {};
  const call: Call = {
    method: 'PUT',
    path: u.serverVolumeAttachmentURL(serverId, volumeId),
    endpoint: 'PUT /servers/:id/os-volume_attachments/:volume',
    body: updateAttachmentBody(volumeId, change),
    action: `updating the attachment of volume ${volumeId} to server ${serverId}`,
  };
  return nova(c, { ...call, ...need }, o);
}

export function detachServerVolume(
  c: OpenStackClient,
  serverId: string,
  volumeId: string,
  o: CallOptions,
): Promise<OpenStackResult<void>> {
  return nova(
    c,
    {
      method: 'DELETE',
      path: u.serverVolumeAttachmentURL(serverId, volumeId),
      endpoint: 'DELETE /servers/:id/os-volume_attachments/:volume',
      action: `detaching volume ${volumeId} from server ${serverId}`,
    },
    o,
  );
}

/**
 * The instance action a server call started, by the request id Nova answered it with. Events
 * (and their `result`) show to members from 2.51, to admins always; `details` to admins from 2.84.
 */
export function showInstanceAction(
  c: OpenStackClient,
  serverId: string,
  requestId: string,
  o: CallOptions,
): Promise<OpenStackResult<{ instanceAction: NovaInstanceAction }>> {
  return nova(
    c,
    {
      method: 'GET',
      path: u.instanceActionURL(serverId, requestId),
      endpoint: 'GET /servers/:id/os-instance-actions/:request',
      action: `reading the action ${requestId} of server ${serverId}`,
    },
    o,
  );
}
