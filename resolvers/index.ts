/** All resolvers, assembled from one module per type or root-field group. */
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import { GraphQLScalarType, Kind } from 'graphql';
import type { Resolvers } from '../schema/generated/resolvers-types';
import { attachmentConsumerType, attachmentMutations, attachmentQueries, attachmentType } from './attachment';
import { cinderMutations, cinderQueries } from './cinder-actions';
import { operationQueries, operationType } from './operation';
import { openStackServerType, serverQueries, serverVolumeAttachmentType } from './server';
import { backendQueries, backendType } from './backend';
import { nodeQueries, nodeType } from './node';
import { pluginQueries, pluginType } from './plugin';
import { externalVolumeType, snapshotMutations, snapshotQueries, snapshotType } from './snapshot';
import { volumeQueries, volumeType } from './volume';
import { volumeMutations } from './volume-mutations';

/**
 * RFC 3339 strings pass through unchanged so Nomad's nanoseconds survive (graphql-scalars'
 * DateTime would round to milliseconds); input parsing reuses graphql-scalars' validation.
 */
const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'RFC 3339 timestamp in UTC; keeps the backend precision (Nomad: nanoseconds).',
  serialize: (v) => (typeof v === 'string' ? v : DateTimeResolver.serialize(v)),
  parseValue: (v) => DateTimeResolver.parseValue(v),
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? DateTimeResolver.parseLiteral(ast) : DateTimeResolver.parseLiteral(ast)),
});

export const resolvers: Resolvers = {
  SafeInt: SafeIntResolver,
  DateTime,
  JSON: JSONResolver,
  Query: {
    ...backendQueries,
    ...volumeQueries,
    ...attachmentQueries,
    ...pluginQueries,
    ...snapshotQueries,
    ...nodeQueries,
    ...operationQueries,
    ...serverQueries,
    ...cinderQueries,
  },
  Mutation: { ...volumeMutations, ...snapshotMutations, ...attachmentMutations, ...cinderMutations },
  Operation: operationType,
  OpenStackServer: openStackServerType,
  ServerVolumeAttachment: serverVolumeAttachmentType,
  Backend: backendType,
  Volume: volumeType,
  Attachment: attachmentType,
  AttachmentConsumer: attachmentConsumerType,
  Plugin: pluginType,
  Snapshot: snapshotType,
  ExternalVolume: externalVolumeType,
  Node: nodeType,
};
