/** Everything the schema's Nomad part resolves: its root fields, details, consumer and entity types. */
import type { Resolvers } from '../../schema/generated/resolvers-types';
import { allocationConsumerType, nodeClaimQueries, nomadNodeType } from './consumers';
import { pluginQueries, pluginType } from './plugin';
import { registrationMutations } from './registration';
import { nomadVolumeDetailsType } from './volume-details';

export const nomadResolvers: Resolvers = {
  Query: { ...pluginQueries, ...nodeClaimQueries },
  Mutation: { ...registrationMutations },
  NomadVolumeDetails: nomadVolumeDetailsType,
  VolumeAllocationConsumer: allocationConsumerType,
  NomadNode: nomadNodeType,
  StoragePlugin: pluginType,
};
