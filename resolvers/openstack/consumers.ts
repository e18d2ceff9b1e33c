/** OpenStack's server consumer: its name and status are read from Nova when asked. */
import type { VolumeServerConsumerResolvers } from '../../schema/generated/resolvers-types';

export const serverConsumerType: VolumeServerConsumerResolvers = {
  server: (c) => ({ __typename: 'Server', id: c.serverId }),
  // From Nova, batched per backend through the server loader.
  name: async (c, _a, ctx) => (await ctx.loaders.server.load({ backend: c.backend, id: c.serverId }))?.name ?? null,
  status: async (c, _a, ctx) => (await ctx.loaders.server.load({ backend: c.backend, id: c.serverId }))?.status ?? null,
};
