/**
 * Creating, deleting, extending and updating a volume. Each returns once the backend has accepted
 * the change, with an operation the gateway drives to a terminal state (SUCCEEDED at once where the
 * backend finishes synchronously); the volume is read back through a fresh loader entry. Each takes
 * an idempotency key. Option objects go to the backend as the resolver built them.
 */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { VolumePatch } from '../adapters/contract/capabilities';
import { OperationRecordGoneError } from '../adapters/contract/errors';
import type { OperationRecord, Volume, VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { operationId, volumeId } from './ids';
import { oncePerKey, type IdempotencyInput } from './idempotency';
import type { CheckedFor } from './input';
import { done, loadOperation, readBack, target, track, trackedOncePerKey } from './operations';

/** A volume after a change and the operation that drives it. */
export interface VolumeChange {
  volume: Volume | null;
  operation: OperationRecord;
}

/** A removal: the removed volume's global id and its operation. */
export interface VolumeRemoval {
  deletedId: string;
  operation: OperationRecord;
}

export interface CreateVolume {
  /** The configured backend's id. */
  backend: string;
  /** The checked spec, as the backend takes it. */
  spec: Parameters<VolumeBackend['createVolume']>[0];
  idempotency: IdempotencyInput;
}

/** A remembered create: the ids to answer a retry with. */
interface RememberedCreate {
  ref: VolumeRef;
  operation: string;
}

export async function createVolume(ctx: GatewayContext, input: CreateVolume): Promise<VolumeChange> {
  const backend = ctx.registry.forId(input.backend);
  // Bad input is refused before a key is claimed: it holds no key and needs no key store.
  backend.createInput?.check?.(input.spec, backend.id);
  const created = await oncePerKey<RememberedCreate>(ctx, backend.id, input.idempotency, async () => {
    const accepted = await backend.createVolume(input.spec, ctx.call(backend.id));
    const operation = await track(ctx, 'CREATE_VOLUME', target(accepted.result), accepted);
    return { ref: accepted.result, operation: operationId(operation) };
  });
  const operation = await loadOperation(ctx, created.operation);
  if (!operation) throw new OperationRecordGoneError(input.idempotency.argument, volumeId(created.ref));
  return { volume: await readBack(ctx, created.ref), operation };
}

export interface DeleteVolume {
  volume: VolumeRef;
  /** The delete's options, as the backend takes them. */
  options: Parameters<VolumeBackend['deleteVolume']>[1];
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function deleteVolume(ctx: GatewayContext, input: DeleteVolume): Promise<VolumeRemoval> {
  const ref = input.volume;
  return trackedOncePerKey(ctx, ref.backend, input.idempotency, volumeId(ref), async () => {
    const accepted = await ctx.registry.forId(ref.backend).deleteVolume(ref, input.options, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref), operation: await track(ctx, 'DELETE_VOLUME', target(ref), accepted) };
  });
}

export interface ExtendVolume {
  volume: VolumeRef;
  /** The checked new size, positive. */
  newSizeBytes: number;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function extendVolume(ctx: GatewayContext, input: ExtendVolume): Promise<VolumeChange> {
  const ref = input.volume;
  const { operation } = await trackedOncePerKey(ctx, ref.backend, input.idempotency, volumeId(ref), async () => {
    const accepted = await ctx.registry.forId(ref.backend).extendVolume(ref, input.newSizeBytes, ctx.call(ref.backend));
    return { operation: await track(ctx, 'EXTEND_VOLUME', target(ref), accepted) };
  });
  return { volume: await readBack(ctx, ref), operation };
}

export interface UpdateVolume {
  volume: VolumeRef;
  patch: CheckedFor<VolumePatch>;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

/** Renames, describes or sets metadata (the `volumeUpdates` facet); the answer primes the loader (a retry by key reads it back). */
export async function updateVolume(ctx: GatewayContext, input: UpdateVolume): Promise<VolumeChange> {
  const ref = input.volume;
  const backend = ctx.registry.forId(ref.backend);
  const updates = ctx.registry.capable(backend, 'volumeUpdates');
  // Bad input is refused before a key is claimed.
  const patch = input.patch(backend);
  let volume: Volume | null = null;
  const { operation } = await trackedOncePerKey(ctx, ref.backend, input.idempotency, volumeId(ref), async () => {
    volume = await updates.updateVolume(ref, patch, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref).prime(ref, volume);
    return { operation: await track(ctx, 'UPDATE_VOLUME', target(ref), done(undefined)) };
  });
  return { volume: volume ?? (await readBack(ctx, ref)), operation };
}
