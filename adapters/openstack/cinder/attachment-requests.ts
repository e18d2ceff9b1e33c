/**
 * One function per call of Cinder's attachments API (≥ 3.27: `/attachments`), and the host
 * connector in os-brick's keys, which the attachments API and the connection actions send. Built
 * as `requests.ts` builds the rest: typed neutral input, the path from `urls.ts`, the endpoint named
 * for metrics, the minimum microversion; `results.ts` maps the answers.
 */
import type { CallOptions } from '../../contract/call-options';
import type { HostConnector } from '../../contract/call-inputs';
import type { OpenStackClient, OpenStackResult } from '../client';
import { FEATURES } from '../microversions';
import { cinder, listQuery, type Call, type ListQuery } from './requests';
import type { CinderAttachment } from './results';
import * as u from './urls';

const ATTACHMENTS = { needs: FEATURES.volume.attachmentsApi, feature: "Cinder's attachments API" };

/**
 * A host connector → the os-brick connector properties Cinder's drivers read (`os_type`,
 * `do_local_attach`, `system uuid` with its space …). Only given keys are sent.
 */
export function connectorBody(h: HostConnector): Record<string, unknown> {
  const body: Record<string, unknown> = { host: h.host };
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) body[key] = value;
  };
  set('ip', h.ip);
  set('initiator', h.initiator);
  set('wwpns', h.wwpns);
  set('wwnns', h.wwnns);
  set('nqn', h.nqn);
  set('platform', h.platform);
  set('os_type', h.osType);
  set('multipath', h.multipath);
  set('do_local_attach', h.doLocalAttach);
  set('system uuid', h.systemUuid);
  return body;
}

/** An attachment to create: without a connector it only reserves the volume. */
export interface CreateAttachmentInput {
  volumeId: string;
  connector?: HostConnector;
  /** Attach read-only (3.54). */
  readOnly?: boolean;
}

export function createAttachmentBody(a: CreateAttachmentInput): Record<string, unknown> {
  const body: Record<string, unknown> = { volume_uuid: a.volumeId };
  if (a.connector) body.connector = connectorBody(a.connector);
  if (a.readOnly) body.mode = 'ro';
  return { attachment: body };
}

export function createAttachment(
  c: OpenStackClient,
  a: CreateAttachmentInput,
  o: CallOptions,
): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  const need = a.readOnly ? { needs: FEATURES.volume.attachmentMode, feature: 'a read-only attachment' } : ATTACHMENTS;
  return cinder(
    c,
    {
      method: 'POST',
      path: u.attachmentsURL(),
      endpoint: 'POST /attachments',
      body: createAttachmentBody(a),
      action: `attaching volume ${a.volumeId}`,
      ...need,
    },
    o,
  );
}

export function updateAttachment(
  c: OpenStackClient,
  id: string,
  connector: HostConnector,
  o: CallOptions,
): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  const body = { attachment: { connector: connectorBody(connector) } };
  return cinder(
    c,
    {
      method: 'PUT',
      path: u.attachmentURL(id),
      endpoint: 'PUT /attachments/:id',
      body,
      action: `updating attachment ${id}`,
      ...ATTACHMENTS,
    },
    o,
  );
}

export function completeAttachment(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<void>> {
  const call: Call = {
    method: 'POST',
    path: u.attachmentActionURL(id),
    endpoint: 'POST /attachments/:id/action os-complete',
    body: { 'os-complete': {} },
    action: `completing attachment ${id}`,
  };
  return cinder(c, { ...call, needs: FEATURES.volume.attachmentComplete, feature: 'completing an attachment' }, o);
}

export function deleteAttachment(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ attachments: CinderAttachment[] }>> {
  return cinder(
    c,
    {
      method: 'DELETE',
      path: u.attachmentURL(id),
      endpoint: 'DELETE /attachments/:id',
      action: `deleting attachment ${id}`,
      ...ATTACHMENTS,
    },
    o,
  );
}

export function showAttachment(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ attachment: CinderAttachment }>> {
  return cinder(
    c,
    {
      method: 'GET',
      path: u.attachmentURL(id),
      endpoint: 'GET /attachments/:id',
      action: `reading attachment ${id}`,
      ...ATTACHMENTS,
    },
    o,
  );
}

/** Filters of an attachment listing, in the gateway's words. */
export const attachmentFilters = (f: { volumeId?: string }): Record<string, string> | undefined =>
  f.volumeId === undefined ? undefined : { volume_id: f.volumeId };

/**
 * Attachments as summaries (`id`, `status`, `instance`, `volume_id`): enough to tell a host's from
 * Nova's, without the secret-bearing `connection_info` that the detail list carries.
 */
export function listAttachments(
  c: OpenStackClient,
  q: ListQuery,
  o: CallOptions,
): Promise<OpenStackResult<{ attachments: CinderAttachment[] }>> {
  return cinder(
    c,
    {
      method: 'GET',
      path: u.attachmentsURL(),
      endpoint: 'GET /attachments',
      query: listQuery(q),
      action: 'listing attachments',
      ...ATTACHMENTS,
    },
    o,
  );
}

/** The attachments list has no links: the caller pages with limit/marker and stops on a short page. */
export function listAttachmentsDetail(
  c: OpenStackClient,
  q: ListQuery,
  o: CallOptions,
): Promise<OpenStackResult<{ attachments: CinderAttachment[] }>> {
  return cinder(
    c,
    {
      method: 'GET',
      path: u.attachmentsDetailURL(),
      endpoint: 'GET /attachments/detail',
      query: listQuery(q),
      action: 'listing attachments',
      ...ATTACHMENTS,
    },
    o,
  );
}
