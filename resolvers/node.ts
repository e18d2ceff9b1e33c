/** Relay `node(id:)`: any object by global id. */
import type { NodeResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import { globalIdArg } from './args';
import { loadAttachment } from './attachment';
import { loadOperation } from './operation';
import { loadPlugin } from './plugin';

export const nodeQueries: Pick<QueryResolvers, 'node'> = {
  node: async (_parent, { id }, ctx) => {
    const p = globalIdArg(ctx, id, null);
    switch (p.kind) {
      case 'Volume':
        return ctx.loaders.volume.load({ backend: p.backend, namespace: p.scope, nativeId: p.nativeId });
      case 'Attachment':
        return loadAttachment(ctx, id);
      case 'Plugin':
        return loadPlugin(ctx, id);
      case 'Operation':
        return loadOperation(ctx, id);
      case 'Snapshot':
        // Nomad cannot read one snapshot (it lists them by plugin): null there.
        return ctx.registry.forId(p.backend).kind === 'NOMAD' ? null : ctx.registry.forId(p.backend).getSnapshot(p.scope, p.nativeId, ctx.call(p.backend));
    }
  },
};

export const nodeType: NodeResolvers = {
  // Model objects carry no type name; their shapes differ in these marker fields.
  __resolveType: (o) => {
    if ('consumerId' in o) return 'Attachment';
    if ('targetId' in o) return 'Operation';
    if ('ref' in o) return 'Volume';
    if ('sourceExternalVolumeId' in o) return 'Snapshot';
    return 'Plugin';
  },
};
