/** Volume queries, the Volume entity and its details union. Fields a list stub lacks load the full volume. */
import { pageSize, safeText } from '../adapters/contract/input';
import { decodeCursor } from '../adapters/listing';
import type { VolumeRef } from '../adapters/contract/model';
import { completeVolume, getVolume, listVolumesAcrossBackends, operationsOf, volumeId } from '../domain';
import type { GatewayContext } from '../domain/context';
import type { QueryResolvers, VolumeDetailsResolvers, VolumeResolvers } from '../schema/generated/resolvers-types';
import { filterIdArg, globalIdArg, idArg, namespaceArg, ownFields } from './args';
import { mergedConnection } from './connection';
import { volumeProblemsOf } from './problem';

/** Global id → ref, checking the id and that its backend is configured. */
export function volumeRefFromId(ctx: GatewayContext, id: string, argument = 'id'): VolumeRef {
  const p = globalIdArg(ctx, id, 'Volume', argument);
  return { backend: p.backend, namespace: p.scope, nativeId: p.nativeId };
}

export const volumeQueries: Pick<QueryResolvers, 'volumes' | 'volume' | 'volumeByNativeId'> = {
  volumes: async (_p, { first, after, filter }, ctx) => {
    const size = pageSize(first, 50);
    const backends = ctx.registry.select('LIST_VOLUMES', filter?.backends, 'filter.backends');
    const cursor = after
      ? decodeCursor(
          after,
          backends.map((b) => b.id),
        )
      : null;
    const statuses = filter?.status && filter.status.length > 0 ? new Set(filter.status) : null;
    const result = await listVolumesAcrossBackends(ctx, {
      backends,
      query: {
        namespace:
          filter?.namespace === '*'
            ? '*'
            : (filterIdArg(backends, 'namespace', filter?.namespace, 'filter.namespace') ?? '*'),
        name:
          filter?.name === null || filter?.name === undefined ? undefined : safeText(filter.name, 'filter.name', 256),
        node: filterIdArg(backends, 'node', filter?.node, 'filter.node'),
        own: filter ? { filter: ownFields(filter, 'backends', 'namespace', 'name', 'node', 'status') } : undefined,
      },
      statuses,
      first: size,
      after: cursor,
    });
    return mergedConnection(ctx, result.edges, result.pageInfo, result.omissions);
  },
  volume: (_p, { id }, ctx) => getVolume(ctx, volumeRefFromId(ctx, id)),
  volumeByNativeId: (_p, { backend, namespace, nativeId }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    return getVolume(ctx, {
      backend: b.id,
      namespace: namespaceArg(namespace, 'namespace', 'default', false, b),
      nativeId: idArg(b, 'volume', nativeId, 'nativeId'),
    });
  },
};

export const volumeType: VolumeResolvers = {
  __resolveReference: (ref, ctx) => getVolume(ctx, volumeRefFromId(ctx, ref.id)),
  id: (v) => volumeId(v.ref),
  backend: (v, _a, ctx) => ctx.registry.forId(v.ref.backend),
  namespace: (v) => v.ref.namespace,
  nativeId: (v) => v.ref.nativeId,
  // A complete volume answers at once: a promise here would make graphql-js await every volume of a list.
  sizeBytes: (v, _a, ctx) => (v.complete ? v.sizeBytes : completeVolume(ctx, v).then((c) => c.sizeBytes)),
  attachments: (v, _a, ctx) => (v.complete ? v.attachments : completeVolume(ctx, v).then((c) => c.attachments)),
  operations: (v, _a, ctx) => operationsOf(ctx, volumeId(v.ref)),
  problems: (v, _a, ctx) => [...volumeProblemsOf(v, ctx)],
};

export const volumeDetailsType: VolumeDetailsResolvers = {
  __resolveType: (d) => d.__typename,
};
