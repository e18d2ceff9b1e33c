/**
 * Cinder's attachments API step by step (3.27+): reserve, give the host's connector, complete,
 * and list. `attachVolume` with a host target does all steps at once (`attach.ts`).
 */
import type { CallOptions, HostConnector, OpaquePage } from '../backend';
import type { Attachment, VolumeRef } from '../model';
import * as req from './cinder/requests';
import { toHostAttachment } from './cinder/results';
import type { OpenStackContext } from './context';
import { checkedUuid } from './ids';
import { MAX_LIMIT, marker } from './paging';

export async function listHostAttachments(ctx: OpenStackContext, scope: string, q: { volumeId?: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<Attachment>> {
  const limit = Math.min(q.limit, MAX_LIMIT);
  const volumeId = q.volumeId === undefined ? undefined : checkedUuid(q.volumeId, 'volumeId');
  const { data } = await req.listAttachmentsDetail(ctx.client, { limit, marker: marker(q.token), filters: req.attachmentFilters({ volumeId }) }, o);
  const list = data?.attachments ?? [];
  // The attachments list never has links: a full page may have more behind it.
  return { items: list.map((a) => toHostAttachment(ctx.backend, scope, a)), next: list.length === limit && list.length > 0 ? list[list.length - 1]!.id : null };
}

/**
 * The attachment as it is now. Cinder answers a PUT (and a POST with connector) with the
 * attachment as it was before the update (cinder-21/05), so the current state comes from a show.
 */
export async function readHostAttachment(ctx: OpenStackContext, scope: string, id: string, o: CallOptions): Promise<Attachment> {
  const { data } = await req.showAttachment(ctx.client, id, o);
  return toHostAttachment(ctx.backend, scope, data!.attachment);
}

/** A host attachment without connector only reserves the volume (status `reserved`). */
export async function reserveHostAttachment(ctx: OpenStackContext, ref: VolumeRef, o: CallOptions): Promise<Attachment> {
  const { data } = await req.createAttachment(ctx.client, { volumeId: checkedUuid(ref.nativeId, 'input.volumeId') }, o);
  return toHostAttachment(ctx.backend, ref.namespace, data!.attachment);
}

export async function updateHostAttachment(ctx: OpenStackContext, ref: VolumeRef, attachmentId: string, connector: HostConnector, o: CallOptions): Promise<Attachment> {
  const id = checkedUuid(attachmentId, 'input.attachmentId');
  await req.updateAttachment(ctx.client, id, connector, o);
  return readHostAttachment(ctx, ref.namespace, id, o);
}

export async function completeHostAttachment(ctx: OpenStackContext, attachmentId: string, o: CallOptions): Promise<void> {
  await req.completeAttachment(ctx.client, checkedUuid(attachmentId, 'input.attachmentId'), o);
}
