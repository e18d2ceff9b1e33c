/**
 * Volume mutations. Nomad's create, delete, deregister and detach are synchronous, so each
 * returns once the backend has answered; the volume is read back through a fresh loader entry.
 */
import type { MutationResolvers } from '../schema/generated/resolvers-types';
import { createVolumeSpec, keyValues, registerVolumeSpec } from './args';
import { volumeId, volumeRefFromId } from './volume';
import { safeIdentifier } from '../adapters/input';

export const volumeMutations: Pick<MutationResolvers, 'createVolume' | 'registerVolume' | 'deregisterVolume' | 'deleteVolume' | 'detachVolume'> = {
  createVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const ref = await backend.createVolume(createVolumeSpec(input), ctx.call(backend.id));
    ctx.loaders.volume.clear(ref);
    return { volume: await ctx.loaders.volume.load(ref) };
  },
  registerVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const ref = await backend.registerVolume(registerVolumeSpec(input), ctx.call(backend.id));
    ctx.loaders.volume.clear(ref);
    return { volume: await ctx.loaders.volume.load(ref) };
  },
  deregisterVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    await ctx.registry.forId(ref.backend).deregisterVolume(ref, input.force ?? false, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref) };
  },
  deleteVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    await ctx.registry.forId(ref.backend).deleteVolume(ref, keyValues(input.secrets, 'input.secrets'), ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref) };
  },
  detachVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    await ctx.registry.forId(ref.backend).detachVolume(ref, safeIdentifier(input.nodeId, 'input.nodeId'), ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { volume: await ctx.loaders.volume.load(ref) };
  },
};
