/** Volume queries, the Volume entity and its details union. Fields a list stub lacks load the full volume. */
import { NotFoundError } from '../adapters/contract/errors';
import { encodeGlobalId } from '../adapters/contract/ids';
import { pageSize, safeText } from '../adapters/contract/input';
import { decodeCursor, listVolumesMerged } from '../adapters/listing';
import type { Volume as VolumeModel, VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from '../server/context';
import type { QueryResolvers, VolumeDetailsResolvers, VolumeResolvers } from '../schema/generated/resolvers-types';
import { filterIdArg, globalIdArg, idArg, namespaceArg, ownFields } from './args';
import { mergedConnection } from './connection';
import { operationsOf } from './operation';

export const volumeId = (ref: VolumeRef): string => encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId });

/** Global id → ref, checking the id and that its backend is configured. */
export function volumeRefFromId(ctx: GatewayContext, id: string, argument = 'id'): VolumeRef {
  const p = globalIdArg(ctx, id, 'Volume', argument);
  return { backend: p.backend, namespace: p.scope, nativeId: p.nativeId };
}

/** Loads a volume that must exist. */
export async function requireVolume(ctx: GatewayContext, ref: VolumeRef): Promise<VolumeModel> {
  const v = await ctx.loaders.volume.load(ref);
  if (!v) throw new NotFoundError(`volume "${ref.nativeId}" in namespace "${ref.namespace}" does not exist on backend "${ref.backend}"`, { backend: ref.backend });
  return v;
}

/** The volume with everything a full read has (itself when it came from one). */
export const complete = (ctx: GatewayContext, v: VolumeModel): Promise<VolumeModel> => (v.complete ? Promise.resolve(v) : requireVolume(ctx, v.ref));

/** Full volumes a list returned go into the loader, so a detail read never repeats the list's work. */
function prime(ctx: GatewayContext, volumes: readonly VolumeModel[]): void {
  for (const v of volumes) if (v.complete) ctx.loaders.volume.prime(v.ref, v);
}

export const volumeQueries: Pick<QueryResolvers, 'volumes' | 'volume' | 'volumeByNativeId'> = {
  volumes: async (_p, { first, after, filter }, ctx) => {
    const size = pageSize(first, 50);
    const backends = ctx.registry.select('LIST_VOLUMES', filter?.backends, 'filter.backends');
    const cursor = after ? decodeCursor(after, backends.map((b) => b.id)) : null;
    const statuses = filter?.status && filter.status.length > 0 ? new Set(filter.status) : null;
    const result = await listVolumesMerged({
      backends,
      query: {
        namespace: filter?.namespace === '*' ? '*' : (filterIdArg(backends, 'namespace', filter?.namespace, 'filter.namespace') ?? '*'),
        name: filter?.name === null || filter?.name === undefined ? undefined : safeText(filter.name, 'filter.name', 256),
        node: filterIdArg(backends, 'node', filter?.node, 'filter.node'),
        own: filter ? { filter: ownFields(filter, 'backends', 'namespace', 'name', 'node', 'status') } : undefined,
      },
      keep: statuses ? (v) => statuses.has(v.status) : undefined,
      first: size,
      after: cursor,
      callFor: (id) => ctx.call(id),
      backendDeadlineMs: ctx.registry.listBackendDeadlineMs,
    });
    prime(ctx, result.edges.map((e) => e.node));
    return mergedConnection(ctx, result.edges, result.pageInfo, result.omissions);
  },
  volume: (_p, { id }, ctx) => ctx.loaders.volume.load(volumeRefFromId(ctx, id)),
  volumeByNativeId: (_p, { backend, namespace, nativeId }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    return ctx.loaders.volume.load({ backend: b.id, namespace: namespaceArg(namespace, 'namespace', 'default', false, b), nativeId: idArg(b, 'volume', nativeId, 'nativeId') });
  },
};

export const volumeType: VolumeResolvers = {
  __resolveReference: (ref, ctx) => ctx.loaders.volume.load(volumeRefFromId(ctx, ref.id)),
  id: (v) => volumeId(v.ref),
  backend: (v, _a, ctx) => ctx.registry.forId(v.ref.backend),
  namespace: (v) => v.ref.namespace,
  nativeId: (v) => v.ref.nativeId,
  sizeBytes: async (v, _a, ctx) => (await complete(ctx, v)).sizeBytes,
  attachments: async (v, _a, ctx) => (await complete(ctx, v)).attachments,
  operations: (v, _a, ctx) => operationsOf(ctx, volumeId(v.ref)),
};

export const volumeDetailsType: VolumeDetailsResolvers = {
  __resolveType: (d) => d.__typename,
};
