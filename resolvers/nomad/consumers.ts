/** Nomad's consumer type (an allocation holding a claim) and the node entity a scheduler subgraph owns. */
import type { NomadNodeResolvers, VolumeAllocationConsumerResolvers } from '../../schema/generated/resolvers-types';
import { entityKey } from '../attachment';

export const allocationConsumerType: VolumeAllocationConsumerResolvers = {
  node: (c) => (c.nodeId ? { __typename: 'NomadNode', id: c.nodeId } : null),
};

export const nomadNodeType: NomadNodeResolvers = {
  __resolveReference: (ref) => ({ __typename: 'NomadNode', id: ref.id }),
  volumeClaims: (n, _a, ctx) => ctx.loaders.nodeClaims.load(entityKey(n.id, 'id')),
};
