/**
 * Core volume mutations. Each returns once the backend has accepted the change, with an operation
 * the gateway drives to a terminal state (SUCCEEDED at once where the backend finishes
 * synchronously, as Nomad does); the volume is read back through a fresh loader entry. Creating
 * mutations take an idempotency key.
 */
import type { AttachTarget, DetachTarget } from '../adapters/contract/backend';
import { BadUserInputError, OperationRecordGoneError } from '../adapters/contract/errors';
import { safeText } from '../adapters/contract/input';
import type { VolumeRef } from '../adapters/contract/model';
import type { MutationResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { idempotent } from '../server/idempotency';
import { createVolumeSpec, hostConnector, idArg, keyValues, optionalText, ownFields, sizeArg } from './args';
import { attachmentRefFromId } from './attachment';
import { loadOperation, operationId, track } from './operation';
import { volumeId, volumeRefFromId } from './volume';

export const target = (ref: VolumeRef) => ({ backend: ref.backend, scope: ref.namespace, id: volumeId(ref) });

/** The volume read after a change (a failed read leaves it null: the change itself went through). */
export async function readBack(ctx: GatewayContext, ref: VolumeRef) {
  ctx.loaders.volume.clear(ref);
  return ctx.loaders.volume.load(ref).catch(() => null);
}

/** Exactly one of the given inputs must be set. */
export function exactlyOne(given: Record<string, unknown>, argument: string): string {
  const set = Object.entries(given).filter(([, v]) => v !== null && v !== undefined);
  if (set.length !== 1) throw new BadUserInputError(`give exactly one of ${Object.keys(given).map((k) => `${argument}.${k}`).join(', ')}`, argument);
  return set[0]![0];
}

/** Nova's tag rule (≤ 60 characters, no `/` or `,`), checked before any call. */
function optionalTag(tag: string | null | undefined): string | undefined {
  if (tag === null || tag === undefined) return undefined;
  if (tag.length === 0 || tag.length > 60 || /[/,]/.test(tag)) throw new BadUserInputError('input.server.tag must be 1-60 characters without "/" or ","', 'input.server.tag');
  return safeText(tag, 'input.server.tag', 60);
}

/** A remembered create: the ids to answer a retry with. */
interface Remembered {
  ref: VolumeRef;
  operation: string;
}

export const volumeMutations: Pick<MutationResolvers, 'createVolume' | 'deleteVolume' | 'detachVolume' | 'attachVolume' | 'extendVolume' | 'updateVolume'> = {
  createVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const spec = createVolumeSpec(input, backend, ctx.registry.all);
    const { idempotencyKey, ...fingerprinted } = input;
    const done = await idempotent<Remembered>(ctx.idempotency, { backend: backend.id, credential: ctx.call(backend.id).credential, mutation: 'createVolume' }, idempotencyKey, fingerprinted, async () => {
      const accepted = await backend.createVolume(spec, ctx.call(backend.id));
      const operation = await track(ctx, 'CREATE_VOLUME', target(accepted.result), accepted);
      return { ref: accepted.result, operation: operationId(operation) };
    });
    const operation = await loadOperation(ctx, done.operation);
    if (!operation) throw new OperationRecordGoneError('input.idempotencyKey', volumeId(done.ref));
    return { volume: await readBack(ctx, done.ref), operation };
  },
  deleteVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const accepted = await ctx.registry
      .forId(ref.backend)
      .deleteVolume(ref, { own: ownFields(input, 'id') }, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref), operation: await track(ctx, 'DELETE_VOLUME', target(ref), accepted) };
  },
  detachVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(ref.backend);
    const which = exactlyOne({ serverId: input.serverId, nodeId: input.nodeId, hostAttachmentId: input.hostAttachmentId }, 'input');
    const t: DetachTarget =
      which === 'serverId'
        ? { kind: 'server', serverId: idArg(b, 'server', input.serverId!, 'input.serverId') }
        : which === 'nodeId'
          ? { kind: 'node', nodeId: idArg(b, 'node', input.nodeId!, 'input.nodeId') }
          : { kind: 'hostAttachment', attachmentId: attachmentRefFromId(ctx, input.hostAttachmentId!, 'input.hostAttachmentId').consumerId };
    const accepted = await b.detachVolume(ref, t, ctx.call(ref.backend));
    const operation = await track(ctx, 'DETACH_VOLUME', target(ref), accepted);
    ctx.live?.accepted({ kind: 'DETACH', volume: ref, target: t, pending: accepted.pending !== null });
    return { volume: await readBack(ctx, ref), operation };
  },
  attachVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(ref.backend);
    const which = exactlyOne({ server: input.server, host: input.host }, 'input');
    const t: AttachTarget =
      which === 'server'
        ? {
            kind: 'server',
            serverId: idArg(b, 'server', input.server!.serverId, 'input.server.serverId'),
            device: input.server!.device ? safeText(input.server!.device, 'input.server.device', 64) : undefined,
            tag: optionalTag(input.server!.tag),
            deleteOnTermination: input.server!.deleteOnTermination ?? undefined,
          }
        : { kind: 'host', connector: hostConnector(input.host!.connector, 'input.host.connector'), readOnly: input.host!.readOnly ?? false };
    const { idempotencyKey, ...fingerprinted } = input;
    const done = await idempotent(ctx.idempotency, { backend: b.id, credential: ctx.call(b.id).credential, mutation: 'attachVolume' }, idempotencyKey, fingerprinted, async () => {
      const accepted = await b.attachVolume(ref, t, ctx.call(ref.backend));
      const operation = await track(ctx, 'ATTACH_VOLUME', target(ref), accepted);
      ctx.live?.accepted({ kind: 'ATTACH', volume: ref, target: t, attachment: accepted.result, pending: accepted.pending !== null });
      return { operation: operationId(operation), attachment: accepted.result };
    });
    return { operation: (await loadOperation(ctx, done.operation))!, attachment: done.attachment, volume: await readBack(ctx, ref) };
  },
  extendVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const size = sizeArg(input.newSizeBytes, input.newSizeGiB, 'input.newSizeBytes', 'input.newSizeGiB');
    if (size === undefined) throw new BadUserInputError('give input.newSizeBytes or input.newSizeGiB', 'input.newSizeBytes');
    if (size <= 0) throw new BadUserInputError('the new size must be positive', 'input.newSizeBytes');
    const accepted = await ctx.registry.forId(ref.backend).extendVolume(ref, size, ctx.call(ref.backend));
    const operation = await track(ctx, 'EXTEND_VOLUME', target(ref), accepted);
    return { volume: await readBack(ctx, ref), operation };
  },
  updateVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const updates = ctx.registry.capable(ctx.registry.forId(ref.backend), 'volumeUpdates');
    const patch = { name: optionalText(input.name, 'input.name', 255), description: optionalText(input.description, 'input.description'), metadata: input.metadata ? keyValues(input.metadata, 'input.metadata') : undefined };
    const volume = await updates.updateVolume(ref, patch, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref).prime(ref, volume);
    return { volume, operation: await track(ctx, 'UPDATE_VOLUME', target(ref), { result: undefined, pending: null }) };
  },
};
