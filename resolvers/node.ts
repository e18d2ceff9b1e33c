/** Relay `node(id:)`: any object by global id. */
import { decodeGlobalId } from '../adapters/ids';
import type { NodeResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import { loadAttachment } from './attachment';
import { loadPlugin } from './plugin';

export const nodeQueries: Pick<QueryResolvers, 'node'> = {
  node: async (_parent, { id }, ctx) => {
    const p = decodeGlobalId(id, null);
    ctx.registry.forId(p.backend);
    switch (p.kind) {
      case 'Volume':
        return ctx.loaders.volume.load({ backend: p.backend, namespace: p.scope, nativeId: p.nativeId });
      case 'Attachment':
        return loadAttachment(ctx, id);
      case 'Plugin':
        return loadPlugin(ctx, id);
      default:
        // Snapshots are not readable one by one on every backend (Nomad lists them by plugin).
        return null;
    }
  },
};

export const nodeType: NodeResolvers = {
  // Model objects carry no type name; their shapes differ in these marker fields.
  __resolveType: (o) => {
    if ('consumerId' in o) return 'Attachment';
    if ('ref' in o) return 'Volume';
    if ('sourceExternalVolumeId' in o) return 'Snapshot';
    return 'Plugin';
  },
};
