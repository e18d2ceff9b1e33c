/** Nomad's catalogue-only mutations: register an existing provider volume, deregister one. */
import type { MutationResolvers } from '../../schema/generated/resolvers-types';
import { registerVolumeSpec } from '../args';
import { track } from '../operation';
import { volumeId, volumeRefFromId } from '../volume';
import { readBack, target } from '../volume-mutations';

export const registrationMutations: Pick<MutationResolvers, 'registerNomadVolume' | 'deregisterNomadVolume'> = {
  registerNomadVolume: async (_p, { input }, ctx) => {
    const b = ctx.registry.forArgument(input.backend, 'input.backend');
    const ref = await ctx.registry.capable(b, 'registration').registerVolume(registerVolumeSpec(input, b), ctx.call(b.id));
    const operation = await track(ctx, 'REGISTER_VOLUME', target(ref), { result: ref, pending: null });
    return { volume: await readBack(ctx, ref), operation };
  },
  deregisterNomadVolume: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    await ctx.registry.capable(ctx.registry.forId(ref.backend), 'registration').deregisterVolume(ref, input.force ?? false, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref), operation: await track(ctx, 'DEREGISTER_VOLUME', target(ref), { result: undefined, pending: null }) };
  },
};
