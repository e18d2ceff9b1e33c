/** Nomad's consumer type (an allocation holding a claim), the node entity a scheduler subgraph owns, and a node's claims as root fields. */
import type {
  NomadNodeResolvers,
  QueryResolvers,
  VolumeAllocationConsumerResolvers,
} from '../../schema/generated/resolvers-types';
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

/** A node's claims for callers without a supergraph (schema/nomad/attachment.graphql). */
export const nodeClaimQueries: Pick<QueryResolvers, 'nodeVolumeClaims' | 'nodeVolumeClaimList'> = {
  nodeVolumeClaims: async (_p, { nodeId }, ctx) => wholeList(ctx, await nodeClaims(ctx, nodeId, 'nodeId')),
  nodeVolumeClaimList: async (_p, { nodeId }, ctx) => mergedList(ctx, await nodeClaims(ctx, nodeId, 'nodeId')),
};
