/** Nomad's catalogue-only mutations: register an existing provider volume, deregister one (domain/registration.ts). */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { VolumeSpec } from '../../adapters/contract/call-inputs';
import { safeText } from '../../adapters/contract/input';
import { deregisterVolume, registerVolume } from '../../domain';
import type { MutationResolvers, RegisterNomadVolumeInput } from '../../schema/generated/resolvers-types';
import { bytes, capacity, namespaceArg, ownFields } from '../args';
import { idempotencyArg } from '../idempotency';
import { volumeRefFromId } from '../volume';

/** A register's input → the neutral spec; the rest of the input is the backend's own part (Nomad parses it). */
function registerVolumeSpec(input: RegisterNomadVolumeInput, b: Pick<VolumeBackend, 'kind'>): VolumeSpec {
  const min = bytes(input.sizeBytes, 'input.sizeBytes');
  const max = bytes(input.maxSizeBytes, 'input.maxSizeBytes');
  capacity(min, max, 'input.sizeBytes');
  return {
    namespace: namespaceArg(input.namespace, 'input.namespace', 'default', false, b),
    name: safeText(input.name, 'input.name', 256),
    capacityMinBytes: min,
    capacityMaxBytes: max,
    own: ownFields(input, 'backend', 'namespace', 'name', 'sizeBytes', 'maxSizeBytes', 'idempotencyKey'),
  };
}

export const registrationMutations: Pick<MutationResolvers, 'registerNomadVolume' | 'deregisterNomadVolume'> = {
  registerNomadVolume: async (_p, { input }, ctx) => {
    const b = ctx.registry.forArgument(input.backend, 'input.backend');
    return registerVolume(ctx, {
      backend: b.id,
      spec: (backend) => registerVolumeSpec(input, backend),
      idempotency: idempotencyArg('registerNomadVolume', input),
    });
  },
  deregisterNomadVolume: async (_p, { input }, ctx) =>
    deregisterVolume(ctx, {
      volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'),
      force: input.force ?? false,
      idempotency: idempotencyArg('deregisterNomadVolume', input),
    }),
};
