/** Nomad's consumer type (an allocation holding a claim) and the node entity a scheduler subgraph owns. */
import type { NomadNodeResolvers, VolumeAllocationConsumerResolvers } from '../../schema/generated/resolvers-types';
import { nodeClaims } from '../attachment';
import { mergedList, wholeList } from '../connection';

export const allocationConsumerType: VolumeAllocationConsumerResolvers = {
  node: (c) => (c.nodeId ? { __typename: 'NomadNode', id: c.nodeId } : null),
};

export const nomadNodeType: NomadNodeResolvers = {
  __resolveReference: (ref) => ({ __typename: 'NomadNode', id: ref.id }),
  volumeClaims: async (n, _a, ctx) => wholeList(ctx, await nodeClaims(ctx, n.id, 'id')),
  volumeClaimList: async (n, _a, ctx) => mergedList(ctx, await nodeClaims(ctx, n.id, 'id')),
};
