/** NomadVolumeDetails: the list-stub part comes with the volume; fields marked (read) load the full volume. */
import { NotFoundError } from '../../adapters/contract/errors';
import { nomadDetails, type NomadVolumeDetails, type NomadVolumeFull } from '../../adapters/nomad/model';
import { requireVolume } from '../../domain';
import type { NomadVolumeDetailsResolvers } from '../../schema/generated/resolvers-types';
import type { GatewayContext } from '../../domain/context';

async function full(d: NomadVolumeDetails, ctx: GatewayContext): Promise<NomadVolumeFull> {
  if (d.full) return d.full;
  const v = await requireVolume(ctx, d.ref);
  const read = nomadDetails(v)?.full;
  if (!read) throw new NotFoundError(`volume "${d.ref.nativeId}" has no full Nomad read`, { backend: d.ref.backend });
  return read;
}

export const nomadVolumeDetailsType: NomadVolumeDetailsResolvers = {
  plugin: (d, _a, ctx) =>
    d.pluginId ? ctx.loaders.plugin.load({ backend: d.ref.backend, nativeId: d.pluginId }) : null,
  providerVersion: async (d, _a, ctx) => (await full(d, ctx)).providerVersion,
  requestedMinBytes: async (d, _a, ctx) => (await full(d, ctx)).requestedCapacityMinBytes,
  requestedMaxBytes: async (d, _a, ctx) => (await full(d, ctx)).requestedCapacityMaxBytes,
  requestedCapabilities: async (d, _a, ctx) => (await full(d, ctx)).requestedCapabilities,
  requestedTopologies: async (d, _a, ctx) => (await full(d, ctx)).requestedTopologies,
  mountOptions: async (d, _a, ctx) => (await full(d, ctx)).mountOptions,
  parameters: async (d, _a, ctx) => (await full(d, ctx)).parameters,
  context: async (d, _a, ctx) => (await full(d, ctx)).context,
  cloneId: async (d, _a, ctx) => (await full(d, ctx)).cloneId,
  snapshotId: async (d, _a, ctx) => (await full(d, ctx)).snapshotId,
};
