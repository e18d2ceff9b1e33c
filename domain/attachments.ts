/**
 * Attaching and detaching a volume, and changing a server attachment. Attach and detach tell the
 * live path at once (ATTACHING/DETACHING before the backend finishes); each tracks the operation and
 * reads the volume back; each takes an idempotency key.
 */
import type { AttachTarget, DetachTarget } from '../adapters/contract/call-inputs';
import type { Attachment, OperationRecord, Volume, VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { operationId, volumeId } from './ids';
import { oncePerKey, type IdempotencyInput } from './idempotency';
import type { CheckedFor } from './input';
import { loadOperation, readBack, target, track, trackedOncePerKey } from './operations';
import type { VolumeChange } from './volumes';

export interface AttachVolume {
  volume: VolumeRef;
  /** Where to attach, its identifiers checked with the backend's rules (its kind's own rules, `attachInput`, are checked here). */
  target: AttachTarget;
  idempotency: IdempotencyInput;
}

/** An attach's answer: the attachment being made (null when the backend names none yet). */
export interface VolumeAttach {
  volume: Volume | null;
  operation: OperationRecord;
  attachment: Attachment | null;
}

/** A remembered attach: the operation's id and the attachment as answered. */
interface RememberedAttach {
  operation: string;
  attachment: Attachment | null;
}

export async function attachVolume(ctx: GatewayContext, input: AttachVolume): Promise<VolumeAttach> {
  const ref = input.volume;
  const b = ctx.registry.forId(ref.backend);
  // The kind's own rules on the target, before a key is claimed (as a create's own part is checked).
  b.attachInput?.check(input.target);
  const attached = await oncePerKey<RememberedAttach>(ctx, b.id, input.idempotency, async () => {
    const accepted = await b.attachVolume(ref, input.target, ctx.call(ref.backend));
    const operation = await track(ctx, 'ATTACH_VOLUME', target(ref), accepted);
    ctx.live?.accepted({
      kind: 'ATTACH',
      volume: ref,
      target: input.target,
      attachment: accepted.result,
      pending: accepted.pending !== null,
    });
    return { operation: operationId(operation), attachment: accepted.result };
  });
  return {
    operation: (await loadOperation(ctx, attached.operation))!,
    attachment: attached.attachment,
    volume: await readBack(ctx, ref),
  };
}

export interface DetachVolume {
  volume: VolumeRef;
  /** What to detach from, checked with the backend's rules. */
  target: DetachTarget;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function detachVolume(ctx: GatewayContext, input: DetachVolume): Promise<VolumeChange> {
  const ref = input.volume;
  const { operation } = await trackedOncePerKey(ctx, ref.backend, input.idempotency, volumeId(ref), async () => {
    const accepted = await ctx.registry.forId(ref.backend).detachVolume(ref, input.target, ctx.call(ref.backend));
    const operation = await track(ctx, 'DETACH_VOLUME', target(ref), accepted);
    ctx.live?.accepted({ kind: 'DETACH', volume: ref, target: input.target, pending: accepted.pending !== null });
    return { operation };
  });
  return { volume: await readBack(ctx, ref), operation };
}

export interface UpdateServerAttachment {
  /** The attached volume. */
  volume: VolumeRef;
  /** The server it is attached to, checked with the backend's rules. */
  serverId: CheckedFor<string>;
  /** The volume to swap in (of the same backend), if any. */
  newVolume?: VolumeRef | null;
  /** Whether the server's deletion deletes the volume; unchanged when absent. */
  deleteOnTermination?: boolean;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

/** Swaps the attached volume or changes deleteOnTermination (the `serverAttachments` facet). */
export async function updateServerAttachment(
  ctx: GatewayContext,
  input: UpdateServerAttachment,
): Promise<VolumeChange> {
  const ref = input.volume;
  const b = ctx.registry.forId(ref.backend);
  const servers = ctx.registry.capable(b, 'serverAttachments');
  const serverId = input.serverId(b);
  const { operation } = await trackedOncePerKey(ctx, b.id, input.idempotency, volumeId(ref), async () => {
    const accepted = await servers.updateServerAttachment(
      serverId,
      ref.nativeId,
      { newVolumeId: input.newVolume?.nativeId, deleteOnTermination: input.deleteOnTermination },
      ctx.call(ref.backend),
    );
    return { operation: await track(ctx, 'UPDATE_ATTACHMENT', target(ref), accepted) };
  });
  return { operation, volume: await readBack(ctx, ref) };
}
