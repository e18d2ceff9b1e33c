/**
 * The attachments API (≥ 3.27; os-complete ≥ 3.44), as recorded in cinder-21/05 and 12:
 * POST 200 (not 202), PUT/POST-with-connector answer with the attachment as loaded *before* the
 * connector update (status still `reserved`, attached_at `""`), DELETE 200 with the volume's
 * remaining attachments, os-complete 204; lists never carry links.
 */
import { ApiError, GENERIC_NOT_FOUND } from '../http/fault';
import { atLeast } from '../http/microversion';
import type { Attachment } from '../model';
import { pyRepr } from '../pyjson';
import {
  checkDeletionAllowed,
  completeAttachment,
  connectAttachment,
  removeAttachment,
  reserveAttachment,
} from './attach-core';
import { asObject, ok, singleAction, type CinderCtx, type CinderResult } from './context';
import { listItems, type ListSpec } from './list-query';
import { canSee, getVolume } from './lookup';
import { authorize } from './policy';
import { requireElement, requireProperty, schemaError } from './validation';
import { attachmentView } from './views';

const ATTACHMENT_LIST: ListSpec<Attachment & { projectId: string }> = {
  allowed: ['volume_id', 'status', 'instance_id', 'attach_status'],
  fields: {
    id: (a) => a.id,
    volume_id: (a) => a.volumeId,
    status: (a) => a.attachStatus,
    attach_status: (a) => a.attachStatus,
    instance_id: (a) => a.instanceUuid,
    created_at: (a) => a.createdAt,
  },
  countable: false,
  markerNotFound: (m) => notFoundText(m),
};

function notFoundText(id: string): string {
  return `Volume attachment could not be found with filter: attachment_id = ${id}.`;
}

function visibleAttachments(ctx: CinderCtx): Array<Attachment & { projectId: string }> {
  return [...ctx.state.volumes.values()]
    .filter((v) => canSee(ctx, v.projectId))
    .flatMap((v) => v.attachments.map((a) => ({ ...a, projectId: v.projectId })));
}

function getAttachment(ctx: CinderCtx, id: string): { a: Attachment; v: ReturnType<typeof getVolume> } {
  const found = ctx.state.findAttachment(id);
  if (!found || !canSee(ctx, found.volume.projectId)) throw new ApiError(404, notFoundText(id));
  return { a: found.attachment, v: found.volume };
}

export function listAttachments(ctx: CinderCtx, detail: boolean): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:attachment_get_all', 'reader');
  const r = listItems(ctx, visibleAttachments(ctx), ATTACHMENT_LIST, (a) => a.projectId === ctx.auth.projectId);
  return ok(200, { attachments: r.page.map((a) => attachmentView(a, detail)) });
}

export function showAttachment(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:attachment_get', 'reader');
  return ok(200, { attachment: attachmentView(getAttachment(ctx, ctx.params.id!).a, true) });
}

function connectorArg(v: unknown): Record<string, unknown> {
  const c = asObject(v);
  if (!c) throw schemaError('connector', v, `${pyRepr(v)} is not of type 'object'`);
  return c;
}

export function createAttachment(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:attachment_create', 'member');
  const body = requireElement(ctx.body, 'attachment');
  const volumeId = requireProperty('attachment', body, 'volume_uuid');
  if (typeof volumeId !== 'string') throw schemaError('volume_uuid', volumeId, `${pyRepr(volumeId)} is not a 'uuid'`);
  let mode: string | undefined;
  if (atLeast(ctx.mv, '3.54') && body.mode !== undefined) {
    if (body.mode !== 'rw' && body.mode !== 'ro')
      throw schemaError('mode', body.mode, `${pyRepr(body.mode)} is not one of ['rw', 'ro']`);
    mode = body.mode;
  }
  const connector = body.connector === undefined || body.connector === null ? undefined : connectorArg(body.connector);
  const v = getVolume(ctx, volumeId);
  const instance = typeof body.instance_uuid === 'string' ? body.instance_uuid : null;
  const a = reserveAttachment(ctx.state, v, instance, mode);
  const view = attachmentView(a, true);
  if (connector) {
    const fail = ctx.state.faults.takeAttach(v.id) !== undefined;
    view.connection_info = connectAttachment(
      ctx.state,
      v,
      a,
      connector,
      { isService: ctx.auth.isService, requestId: ctx.req.requestId },
      fail,
    );
  }
  return ok(200, { attachment: view });
}

export function updateAttachment(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:attachment_update', 'member');
  const body = requireElement(ctx.body, 'attachment');
  const connector = connectorArg(requireProperty('attachment', body, 'connector'));
  const { a, v } = getAttachment(ctx, ctx.params.id!);
  if (v.status.includes('error')) {
    throw new ApiError(
      409,
      `Invalid volume: Volume attachments can not be updated if the volume is in an error state. The Volume ${v.id} currently has a status of: ${v.status} `,
    );
  }
  const view = attachmentView(a, true);
  const fail = ctx.state.faults.takeAttach(v.id) !== undefined;
  view.connection_info = connectAttachment(
    ctx.state,
    v,
    a,
    connector,
    { isService: ctx.auth.isService, requestId: ctx.req.requestId },
    fail,
  );
  return ok(200, { attachment: view });
}

/**
 * A user deleting an attachment Nova still uses gets 409 `ConflictNovaUsingAttachment: Detach
 * volume from instance <server> using the Compute API` (bug #2004555 guard; recorded in
 * nova-26/01 "cinder DELETE /attachments/{nova's attachment} as demo mv 3.27 -> 409";
 * openstack/cinder cinder/api/v3/attachments.py `delete`).
 */
export function deleteAttachment(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:attachment_delete', 'member');
  const { a, v } = getAttachment(ctx, ctx.params.id!);
  checkDeletionAllowed(ctx.state, { isService: ctx.auth.isService, requestId: ctx.req.requestId }, a.id);
  removeAttachment(ctx.state, v, a);
  return ok(200, { attachments: v.attachments.map((x) => attachmentView(x, false)) });
}

/**
 * os-complete has no Nova guard: Cinder 21's `complete` only checks policy (openstack/cinder
 * cinder/api/v3/attachments.py runs the bug #2004555 check on delete alone, and
 * cinder/api/contrib/volume_actions.py on os-detach; no transcript shows otherwise), so completing
 * Nova's attachment answers 204 here as there.
 */
export function attachmentAction(ctx: CinderCtx): CinderResult {
  singleAction(ctx.body, (n) => n === 'os-complete');
  if (!atLeast(ctx.mv, '3.44')) throw new ApiError(404, GENERIC_NOT_FOUND);
  authorize(ctx.state, ctx.auth, 'volume:attachment_complete', 'member');
  const { a, v } = getAttachment(ctx, ctx.params.id!);
  completeAttachment(ctx.state, v, a);
  return ok(204);
}
