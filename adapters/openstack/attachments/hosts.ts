/**
 * Cinder's attachments API step by step (3.27+): reserve, give the host's connector, complete,
 * and list. `attachVolume` with a host target does all steps at once (`operations.ts`).
 */
import type { CallOptions } from '../../contract/call-options';
import type { HostConnector } from '../../contract/call-inputs';
import type { OpaquePage } from '../../contract/call-answers';
import { inputField, NotFoundError, type InputField } from '../../contract/errors';
import type { Attachment, VolumeRef } from '../../contract/model';
import * as req from '../cinder/attachment-requests';
import { attachmentHolder, toHostAttachment } from '../cinder/results';
import type { OpenStackContext } from '../context';
import { NovaAttachmentError } from '../errors';
import { checkedUuid } from '../ids';
import { MAX_LIMIT, marker } from '../paging';

export async function listHostAttachments(
  ctx: OpenStackContext,
  scope: string,
  q: { volumeId?: string; limit: number; token: string | null },
  o: CallOptions,
): Promise<OpaquePage<Attachment>> {
  const limit = Math.min(q.limit, MAX_LIMIT);
  const volumeId = q.volumeId === undefined ? undefined : checkedUuid(q.volumeId, 'volumeId');
  const { data } = await req.listAttachmentsDetail(
    ctx.client,
    { limit, marker: marker(q.token), filters: req.attachmentFilters({ volumeId }) },
    o,
  );
  const list = data?.attachments ?? [];
  // The attachments list never has links: a full page may have more behind it.
  return {
    items: list.map((a) => toHostAttachment(ctx.backend, scope, a)),
    next: list.length === limit && list.length > 0 ? list[list.length - 1]!.id : null,
  };
}

/**
 * The attachment as it is now. Cinder answers a PUT (and a POST with connector) with the
 * attachment as it was before the update (cinder-21/05), so the current state comes from a show.
 */
export async function readHostAttachment(
  ctx: OpenStackContext,
  scope: string,
  id: string,
  o: CallOptions,
): Promise<Attachment> {
  const { data } = await req.showAttachment(ctx.client, id, o);
  return toHostAttachment(ctx.backend, scope, data!.attachment);
}

/** A host attachment without connector only reserves the volume (status `reserved`). */
export async function reserveHostAttachment(
  ctx: OpenStackContext,
  ref: VolumeRef,
  o: CallOptions,
): Promise<Attachment> {
  const { data } = await req.createAttachment(
    ctx.client,
    { volumeId: checkedUuid(ref.nativeId, inputField('volumeId')) },
    o,
  );
  return toHostAttachment(ctx.backend, ref.namespace, data!.attachment);
}

/** What a host-attachment mutation does, and the mutation that does it for a Nova server's attachment. */
export type HostAttachmentUse = 'detach' | 'update' | 'complete';
const THROUGH_NOVA: Record<HostAttachmentUse, string> = {
  detach: 'detachVolume',
  update: 'updateNovaVolumeAttachment',
  complete: 'updateNovaVolumeAttachment',
};

/**
 * The Cinder id of the host attachment that an attachment's consumer id names, read from the
 * volume's attachments (one summary list, no secrets) before any write. The gateway id of an
 * attachment carries its consumer (`toHostAttachment`, `toVolume`): a host attachment's Cinder id,
 * but the server's id for one Nova made. Sent as is, a server id reached Cinder as
 * `DELETE /attachments/<server id>` and came back as a misleading NOT_FOUND; Nova's own Cinder id
 * gets Cinder's 409. So a Nova server's attachment, named either way, is refused with
 * {@link NovaAttachmentError} naming the mutation that goes through Nova; an id the volume does
 * not have is NOT_FOUND saying so.
 */
export async function hostAttachmentId(
  ctx: OpenStackContext,
  volumeId: string,
  consumerId: string,
  use: HostAttachmentUse,
  argument: InputField,
  o: CallOptions,
): Promise<string> {
  const wanted = checkedUuid(consumerId, argument);
  const { data } = await req.listAttachments(
    ctx.client,
    { limit: MAX_LIMIT, filters: req.attachmentFilters({ volumeId }) },
    o,
  );
  const holders = (data?.attachments ?? []).map(attachmentHolder);
  const found = holders.find((h) => h.serverId === wanted) ?? holders.find((h) => h.id === wanted);
  if (!found)
    throw new NotFoundError('', { backend: ctx.backend }).naming(
      (name) => `${name(argument.path)}: volume ${volumeId} has no attachment ${wanted} (it may have been detached)`,
    );
  if (found.serverId !== null) throw new NovaAttachmentError(argument, found.serverId, THROUGH_NOVA[use]);
  return found.id;
}

export async function updateHostAttachment(
  ctx: OpenStackContext,
  ref: VolumeRef,
  attachmentId: string,
  connector: HostConnector,
  o: CallOptions,
): Promise<Attachment> {
  const id = await hostAttachmentId(
    ctx,
    checkedUuid(ref.nativeId, inputField('attachmentId')),
    attachmentId,
    'update',
    inputField('attachmentId'),
    o,
  );
  await req.updateAttachment(ctx.client, id, connector, o);
  return readHostAttachment(ctx, ref.namespace, id, o);
}

export async function completeHostAttachment(
  ctx: OpenStackContext,
  ref: VolumeRef,
  attachmentId: string,
  o: CallOptions,
): Promise<void> {
  const id = await hostAttachmentId(
    ctx,
    checkedUuid(ref.nativeId, inputField('attachmentId')),
    attachmentId,
    'complete',
    inputField('attachmentId'),
    o,
  );
  await req.completeAttachment(ctx.client, id, o);
}
