/**
 * Unified volume mutations. Each returns once the backend has accepted the change, with an
 * Operation the gateway drives to a terminal state (at once SUCCEEDED where the backend
 * finishes synchronously, as Nomad does); the volume is read back through a fresh loader entry.
 */
import { BadUserInputError } from '../adapters/errors';
import { safeText } from '../adapters/input';
import type { VolumeRef } from '../adapters/model';
import type { MutationResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { createVolumeSpec, keyValues, optionalIdArg, optionalText, positiveInt, registerVolumeSpec, secretList } from './args';
import { track } from './operation';
import { volumeId, volumeRefFromId } from './volume';

const GIB = 1024 ** 3;
const target = (ref: VolumeRef) => ({ backend: ref.backend, scope: ref.namespace, id: volumeId(ref) });

/** The volume read after a change (a failed read leaves it null: the change itself went through). */
async function readBack(ctx: GatewayContext, ref: VolumeRef) {
  ctx.loaders.volume.clear(ref);
  return ctx.loaders.volume.load(ref).catch(() => null);
}

/** A JSON object argument (host connector). */
export function jsonObject(v: unknown, argument: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadUserInputError(`${argument} must be a JSON object`, argument);
  if (JSON.stringify(v).length > 8192) throw new BadUserInputError(`${argument} is larger than 8 KiB`, argument);
  return v as Record<string, unknown>;
}

export const volumeMutations: Pick<
  MutationResolvers,
  'createVolume' | 'registerVolume' | 'deregisterVolume' | 'deleteVolume' | 'detachVolume' | 'attachVolume' | 'extendVolume' | 'updateVolume'
> = {
  createVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const accepted = await backend.createVolume(createVolumeSpec(input, backend), ctx.call(backend.id));
    const operation = await track(ctx, 'CREATE_VOLUME', target(accepted.result), accepted);
    return { volume: await readBack(ctx, accepted.result), operation };
  },
  registerVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const ref = await backend.registerVolume(registerVolumeSpec(input, backend), ctx.call(backend.id));
    return { volume: await readBack(ctx, ref), operation: null };
  },
  deregisterVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    await ctx.registry.forId(ref.backend).deregisterVolume(ref, input.force ?? false, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    const operation = await track(ctx, 'DELETE_VOLUME', target(ref), { result: undefined, pending: null });
    return { deletedId: volumeId(ref), operation };
  },
  deleteVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const accepted = await ctx.registry
      .forId(ref.backend)
      .deleteVolume(ref, { secrets: secretList(input.secrets, 'input.secrets'), cascade: input.cascade ?? false, force: input.force ?? false }, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref), operation: await track(ctx, 'DELETE_VOLUME', target(ref), accepted) };
  },
  detachVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const given = [input.nodeId, input.serverId, input.attachmentId].filter((x) => x !== null && x !== undefined);
    if (given.length !== 1) throw new BadUserInputError('give exactly one of input.nodeId (Nomad), input.serverId or input.attachmentId (OpenStack)', 'input');
    const b = ctx.registry.forId(ref.backend);
    const accepted = await b.detachVolume(
      ref,
      {
        nodeId: optionalIdArg(b, 'node', input.nodeId, 'input.nodeId'),
        serverId: optionalIdArg(b, 'server', input.serverId, 'input.serverId'),
        attachmentId: optionalIdArg(b, 'attachment', input.attachmentId, 'input.attachmentId'),
      },
      ctx.call(ref.backend),
    );
    const operation = await track(ctx, 'DETACH_VOLUME', target(ref), accepted);
    return { volume: await readBack(ctx, ref), operation };
  },
  attachVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(ref.backend);
    const accepted = await b.attachVolume(
      ref,
      {
        serverId: optionalIdArg(b, 'server', input.serverId, 'input.serverId'),
        connector: input.connector === null || input.connector === undefined ? undefined : jsonObject(input.connector, 'input.connector'),
        device: input.device ? safeText(input.device, 'input.device', 64) : undefined,
        tag: optionalTag(input.tag),
        deleteOnTermination: input.deleteOnTermination ?? undefined,
        readOnly: input.readOnly ?? undefined,
      },
      ctx.call(ref.backend),
    );
    const operation = await track(ctx, 'ATTACH_VOLUME', target(ref), accepted);
    return { operation, attachment: accepted.result, volume: await readBack(ctx, ref) };
  },
  extendVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const gib = input.newSizeGiB ?? null;
    const bytes = input.newSizeBytes ?? null;
    if ((gib === null) === (bytes === null)) throw new BadUserInputError('give exactly one of input.newSizeGiB and input.newSizeBytes', 'input.newSizeGiB');
    const size = gib !== null ? positiveInt(gib, 'input.newSizeGiB') * GIB : bytes!;
    if (!Number.isSafeInteger(size) || size <= 0) throw new BadUserInputError('the new size must be positive', 'input.newSizeBytes');
    const accepted = await ctx.registry.forId(ref.backend).extendVolume(ref, size, ctx.call(ref.backend));
    const operation = await track(ctx, 'EXTEND_VOLUME', target(ref), accepted);
    return { volume: await readBack(ctx, ref), operation };
  },
  updateVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const volume = await ctx.registry.forId(ref.backend).updateVolume(
      ref,
      {
        name: optionalText(input.name, 'input.name', 255),
        description: optionalText(input.description, 'input.description'),
        metadata: input.metadata ? keyValues(input.metadata, 'input.metadata') : undefined,
      },
      ctx.call(ref.backend),
    );
    ctx.loaders.volume.clear(ref).prime(ref, volume);
    return { volume, operation: null };
  },
};

/** Nova's tag rule (≤ 60 characters, no `/` or `,`), checked before any call. */
function optionalTag(tag: string | null | undefined): string | undefined {
  if (tag === null || tag === undefined) return undefined;
  if (tag.length === 0 || tag.length > 60 || /[/,]/.test(tag)) throw new BadUserInputError('input.tag must be 1-60 characters without "/" or ","', 'input.tag');
  return safeText(tag, 'input.tag', 60);
}
