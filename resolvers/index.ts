/** All resolvers, assembled from one module per type or root-field group; backend-specific ones from resolvers/nomad and resolvers/openstack. */
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import { GraphQLScalarType, Kind } from 'graphql';
import type { Resolvers } from '../schema/generated/resolvers-types';
import { allocationConsumerType, attachmentQueries, attachmentType, consumerType, nomadNodeType, serverConsumerType, serverType } from './attachment';
import { backendQueries, backendType } from './backend';
import { pluginQueries, pluginType } from './nomad/plugin';
import { registrationMutations } from './nomad/registration';
import { nomadVolumeDetailsType } from './nomad/volume-details';
import { operationQueries, operationTargetType, operationType } from './operation';
import { hostAttachmentMutations, hostAttachmentQueries } from './openstack/attachments';
import { cinderMutations, cinderQueries } from './openstack/cinder-actions';
import { snapshotMutations, snapshotQueries, snapshotType } from './snapshot';
import { subscriptionFields, volumeChangeEventType } from './subscription';
import { volumeDetailsType, volumeQueries, volumeType } from './volume';
import { volumeMutations } from './volume-mutations';

/**
 * RFC 3339 strings pass through unchanged so Nomad's nanoseconds survive (graphql-scalars'
 * DateTime would round to milliseconds); input parsing reuses graphql-scalars' validation.
 */
const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'RFC 3339 timestamp in UTC. Keeps the backend\'s precision (Nomad: nanoseconds).',
  serialize: (v) => (typeof v === 'string' ? v : DateTimeResolver.serialize(v)),
  parseValue: (v) => DateTimeResolver.parseValue(v),
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? DateTimeResolver.parseLiteral(ast) : DateTimeResolver.parseLiteral(ast)),
});

/** Connection info is untyped JSON; it is output only. */
const VolumeConnectionInfo = new GraphQLScalarType({ ...JSONResolver.toConfig(), name: 'VolumeConnectionInfo', description: 'Untyped, secret-bearing connection info.' });

export const resolvers: Resolvers = {
  SafeInt: SafeIntResolver,
  DateTime,
  VolumeConnectionInfo,
  Query: {
    ...backendQueries,
    ...volumeQueries,
    ...attachmentQueries,
    ...snapshotQueries,
    ...operationQueries,
    ...pluginQueries,
    ...cinderQueries,
    ...hostAttachmentQueries,
  },
  Mutation: { ...volumeMutations, ...snapshotMutations, ...registrationMutations, ...cinderMutations, ...hostAttachmentMutations },
  Subscription: subscriptionFields,
  VolumeChangeEvent: volumeChangeEventType,
  StorageBackend: backendType,
  Volume: volumeType,
  VolumeDetails: volumeDetailsType,
  NomadVolumeDetails: nomadVolumeDetailsType,
  VolumeAttachment: attachmentType,
  VolumeConsumer: consumerType,
  VolumeAllocationConsumer: allocationConsumerType,
  VolumeServerConsumer: serverConsumerType,
  Server: serverType,
  NomadNode: nomadNodeType,
  VolumeSnapshot: snapshotType,
  VolumeOperation: operationType,
  VolumeOperationTarget: operationTargetType,
  StoragePlugin: pluginType,
};
