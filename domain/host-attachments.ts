/** Host attachments step by step (the `hostAttachments` facet); attachVolume with a host does all steps at once. */
import type { HostConnector } from '../adapters/contract/backend';
import type { Attachment, VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { oncePerKey, type IdempotencyInput } from './idempotency';
import type { CheckedFor } from './input';
import { attachmentOf } from './reads';

export interface ReserveHostAttachment {
  volume: VolumeRef;
  idempotency: IdempotencyInput;
}

/** Reserves the volume for a host without a connector yet. */
export async function reserveHostAttachment(ctx: GatewayContext, input: ReserveHostAttachment): Promise<{ attachment: Attachment }> {
  const ref = input.volume;
  const b = ctx.registry.forId(ref.backend);
  const hosts = ctx.registry.capable(b, 'hostAttachments');
  const attachment = await oncePerKey(ctx, b.id, input.idempotency, () => hosts.reserveHostAttachment(ref, ctx.call(ref.backend)));
  return { attachment };
}

/** A host attachment: its volume and the consumer (attachment) id. */
export interface HostAttachmentRef {
  volume: VolumeRef;
  consumerId: string;
}

export interface UpdateHostAttachment {
  attachment: HostAttachmentRef;
  connector: CheckedFor<HostConnector>;
}

/** Gives a reserved attachment its host's connector. */
export async function updateHostAttachment(ctx: GatewayContext, input: UpdateHostAttachment): Promise<{ attachment: Attachment }> {
  const { volume, consumerId } = input.attachment;
  const b = ctx.registry.forId(volume.backend);
  const hosts = ctx.registry.capable(b, 'hostAttachments');
  return { attachment: await hosts.updateHostAttachment(volume, consumerId, input.connector(b), ctx.call(volume.backend)) };
}

/** Marks the attachment complete and reads it back (null when it is gone). */
export async function completeHostAttachment(ctx: GatewayContext, input: { attachment: HostAttachmentRef }): Promise<{ attachment: Attachment | null }> {
  const { volume, consumerId } = input.attachment;
  await ctx.registry.capable(ctx.registry.forId(volume.backend), 'hostAttachments').completeHostAttachment(volume, consumerId, ctx.call(volume.backend));
  ctx.loaders.volume.clear(volume);
  return { attachment: await attachmentOf(ctx, volume, consumerId) };
}
