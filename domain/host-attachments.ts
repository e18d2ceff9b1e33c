/** Host attachments step by step (the `hostAttachments` facet); attachVolume with a host does all steps at once. Each step takes an idempotency key. */
import type { HostConnector } from '../adapters/contract/call-inputs';
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
export async function reserveHostAttachment(
  ctx: GatewayContext,
  input: ReserveHostAttachment,
): Promise<{ attachment: Attachment }> {
  const ref = input.volume;
  const b = ctx.registry.forId(ref.backend);
  const hosts = ctx.registry.capable(b, 'hostAttachments');
  const attachment = await oncePerKey(ctx, b.id, input.idempotency, () =>
    hosts.reserveHostAttachment(ref, ctx.call(ref.backend)),
  );
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
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

/** Gives a reserved attachment its host's connector. */
export async function updateHostAttachment(
  ctx: GatewayContext,
  input: UpdateHostAttachment,
): Promise<{ attachment: Attachment }> {
  const { volume, consumerId } = input.attachment;
  const b = ctx.registry.forId(volume.backend);
  const hosts = ctx.registry.capable(b, 'hostAttachments');
  const connector = input.connector(b);
  return {
    attachment: await oncePerKey(ctx, b.id, input.idempotency, () =>
      hosts.updateHostAttachment(volume, consumerId, connector, ctx.call(volume.backend)),
    ),
  };
}

export interface CompleteHostAttachment {
  attachment: HostAttachmentRef;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

/** Marks the attachment complete and reads it back (null when it is gone). */
export async function completeHostAttachment(
  ctx: GatewayContext,
  input: CompleteHostAttachment,
): Promise<{ attachment: Attachment | null }> {
  const { volume, consumerId } = input.attachment;
  const hosts = ctx.registry.capable(ctx.registry.forId(volume.backend), 'hostAttachments');
  await oncePerKey(ctx, volume.backend, input.idempotency, async () => {
    await hosts.completeHostAttachment(volume, consumerId, ctx.call(volume.backend));
    return true;
  });
  ctx.loaders.volume.clear(volume);
  return { attachment: await attachmentOf(ctx, volume, consumerId) };
}
