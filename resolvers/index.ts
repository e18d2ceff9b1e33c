/**
 * All resolvers: the core ones, assembled from one module per type or root-field group, and the
 * backends' own sets (resolvers/<backend>/index.ts, handed in by the wiring from the kinds'
 * registrations, server/kinds/), merged root field by root field.
 */
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import { GraphQLScalarType } from 'graphql';
import type { Resolvers } from '../schema/generated/resolvers-types';
import { attachmentQueries, attachmentType, consumerType, serverType } from './attachment';
import { backendQueries, backendType } from './backend';
import { placeInputFields } from './input-fields';
import { problemEvidenceType, problemQueries, problemType, remedyMutationType, statusEvidenceType } from './problem';
import { operationQueries, operationTargetType, operationType } from './operation';
import { snapshotMutations, snapshotQueries, snapshotType } from './snapshot';
import { subscriptionFields, volumeChangeEventType, volumeProblemEventType } from './subscription';
import { volumeDetailsType, volumeQueries, volumeType } from './volume';
import { volumeMutations } from './volume-mutations';

/**
 * RFC 3339 strings pass through unchanged so a backend's nanoseconds survive (graphql-scalars'
 * DateTime would round to milliseconds); input parsing reuses graphql-scalars' validation. Its
 * description is the SDL's (schema/common.graphql).
 */
const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (v) => (typeof v === 'string' ? v : DateTimeResolver.serialize(v)),
  parseValue: (v) => DateTimeResolver.parseValue(v),
  parseLiteral: (ast) => DateTimeResolver.parseLiteral(ast),
});

/** Connection info is untyped JSON; it is output only. */
const VolumeConnectionInfo = new GraphQLScalarType({
  ...JSONResolver.toConfig(),
  name: 'VolumeConnectionInfo',
  description: 'Untyped, secret-bearing connection info.',
});

const core: Resolvers = {
  SafeInt: SafeIntResolver,
  DateTime,
  VolumeConnectionInfo,
  Query: {
    ...backendQueries,
    ...volumeQueries,
    ...attachmentQueries,
    ...snapshotQueries,
    ...operationQueries,
    ...problemQueries,
  },
  Mutation: { ...volumeMutations, ...snapshotMutations },
  Subscription: subscriptionFields,
  VolumeChangeEvent: volumeChangeEventType,
  VolumeProblemEvent: volumeProblemEventType,
  StorageBackend: backendType,
  Volume: volumeType,
  VolumeDetails: volumeDetailsType,
  VolumeAttachment: attachmentType,
  VolumeConsumer: consumerType,
  Server: serverType,
  VolumeSnapshot: snapshotType,
  VolumeOperation: operationType,
  VolumeOperationTarget: operationTargetType,
  VolumeProblem: problemType,
  VolumeProblemEvidence: problemEvidenceType,
  VolumeStatusEvidence: statusEvidenceType,
  VolumeRemedyMutation: remedyMutationType,
};

/** The core's resolvers plus every backend's: types added, root fields merged (a name defined twice is a bug). */
function merge(base: Resolvers, parts: readonly Resolvers[]): Resolvers {
  const out: Record<string, unknown> = { ...base };
  for (const part of parts) {
    for (const [type, fields] of Object.entries(part)) {
      const had = out[type] as Record<string, unknown> | undefined;
      if (had && type !== 'Query' && type !== 'Mutation') throw new Error(`resolvers for ${type} are defined twice`);
      const clash = had && Object.keys(fields as object).find((f) => f in had);
      if (clash) throw new Error(`resolver ${type}.${clash} is defined twice`);
      out[type] = had ? { ...had, ...(fields as object) } : fields;
    }
  }
  return out as Resolvers;
}

/** The core's resolvers with the backends' (each its SDL's root fields and own types), fields placed under their arguments. */
export const gatewayResolvers = (backends: readonly Resolvers[]): Resolvers => placeInputFields(merge(core, backends));
