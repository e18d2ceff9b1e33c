/** Nomad's catalogue-only mutations: register an existing provider volume, deregister one (domain/registration.ts). */
import { deregisterVolume, registerVolume } from '../../domain';
import type { MutationResolvers } from '../../schema/generated/resolvers-types';
import { registerVolumeSpec } from '../args';
import { idempotencyArg } from '../idempotency';
import { volumeRefFromId } from '../volume';

export const registrationMutations: Pick<MutationResolvers, 'registerNomadVolume' | 'deregisterNomadVolume'> = {
  registerNomadVolume: async (_p, { input }, ctx) => {
    const b = ctx.registry.forArgument(input.backend, 'input.backend');
    return registerVolume(ctx, { backend: b.id, spec: (backend) => registerVolumeSpec(input, backend), idempotency: idempotencyArg('registerNomadVolume', input) });
  },
  deregisterNomadVolume: async (_p, { input }, ctx) =>
    deregisterVolume(ctx, { volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'), force: input.force ?? false, idempotency: idempotencyArg('deregisterNomadVolume', input) }),
};
