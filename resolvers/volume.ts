/** Volume queries and the Volume type. Detail fields load the full volume through the request's loader. */
import { NotFoundError } from '../adapters/errors';
import { encodeGlobalId } from '../adapters/ids';
import { pageSize, safeText } from '../adapters/input';
import { decodeCursor, listVolumesMerged } from '../adapters/listing';
import type { Volume as VolumeModel, VolumeDetail, VolumeRef } from '../adapters/model';
import type { GatewayContext } from '../server/context';
import type { QueryResolvers, VolumeResolvers } from '../schema/generated/resolvers-types';
import { filterIdArg, globalIdArg, idArg, namespaceArg } from './args';
import { connection, pathOf, reportPartial } from './connection';

export const volumeId = (ref: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId });

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

async function detail(v: VolumeModel, ctx: GatewayContext): Promise<VolumeDetail> {
  if (v.detail) return v.detail;
  return (await requireVolume(ctx, v.ref)).detail!;
}

export const volumeQueries: Pick<QueryResolvers, 'volumes' | 'volume' | 'volumeByNativeId'> = {
  volumes: async (_p, { first, after, filter }, ctx, info) => {
    const size = pageSize(first, 50);
    const backends = ctx.registry.select('LIST_VOLUMES', filter?.backends, 'filter.backends');
    const cursor = after ? decodeCursor(after, backends.map((b) => b.id)) : null;
    const statuses = filter?.status && filter.status.length > 0 ? new Set(filter.status) : null;
    const result = await listVolumesMerged({
      backends,
      query: {
        namespace: filter?.namespace === '*' ? '*' : (filterIdArg(backends, 'namespace', filter?.namespace, 'filter.namespace') ?? '*'),
        plugin: filterIdArg(backends, 'plugin', filter?.plugin, 'filter.plugin'),
        name: filter?.name === null || filter?.name === undefined ? undefined : safeText(filter.name, 'filter.name', 256),
        node: filterIdArg(backends, 'node', filter?.node, 'filter.node'),
      },
      keep: statuses ? (v) => statuses.has(v.status) : undefined,
      first: size,
      after: cursor,
      callFor: (id) => ctx.call(id),
    });
    reportPartial(ctx, result.failures, pathOf(info.path));
    return connection(result.edges, result.pageInfo);
  },
  volume: async (_p, { id }, ctx) => ctx.loaders.volume.load(volumeRefFromId(ctx, id)),
  volumeByNativeId: async (_p, { backend, namespace, nativeId }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    return ctx.loaders.volume.load({ backend: b.id, namespace: namespaceArg(namespace, 'namespace', 'default', false, b), nativeId: idArg(b, 'volume', nativeId, 'nativeId') });
  },
};

export const volumeType: VolumeResolvers = {
  id: (v) => volumeId(v.ref),
  backend: (v, _a, ctx) => ctx.registry.forId(v.ref.backend),
  namespace: (v) => v.ref.namespace,
  nativeId: (v) => v.ref.nativeId,
  plugin: (v, _a, ctx) => (v.pluginId ? ctx.loaders.plugin.load({ backend: v.ref.backend, nativeId: v.pluginId }) : null),
  capacityBytes: async (v, _a, ctx) => (await detail(v, ctx)).capacityBytes,
  requestedCapacity: async (v, _a, ctx) => {
    const d = await detail(v, ctx);
    return { minBytes: d.requestedCapacityMinBytes, maxBytes: d.requestedCapacityMaxBytes };
  },
  requestedCapabilities: async (v, _a, ctx) => (await detail(v, ctx)).requestedCapabilities,
  requestedTopologies: async (v, _a, ctx) => (await detail(v, ctx)).requestedTopologies,
  providerVersion: async (v, _a, ctx) => (await detail(v, ctx)).providerVersion,
  attachments: async (v, _a, ctx) => (await detail(v, ctx)).attachments,
  mountOptions: async (v, _a, ctx) => (await detail(v, ctx)).mountOptions,
  parameters: async (v, _a, ctx) => (await detail(v, ctx)).parameters,
  context: async (v, _a, ctx) => (await detail(v, ctx)).context,
  cloneId: async (v, _a, ctx) => (await detail(v, ctx)).cloneId,
  snapshotId: async (v, _a, ctx) => (await detail(v, ctx)).snapshotId,
  sizeGiB: (v) => v.openstack?.sizeGiB ?? null,
  description: (v) => v.openstack?.description ?? null,
  volumeType: (v) => v.openstack?.volumeType ?? null,
  availabilityZone: (v) => v.openstack?.availabilityZone ?? null,
  bootable: (v) => v.openstack?.bootable ?? null,
  encrypted: (v) => v.openstack?.encrypted ?? null,
  multiattach: (v) => v.openstack?.multiattach ?? null,
  metadata: (v) => v.openstack?.metadata ?? [],
  imageMetadata: (v) => v.openstack?.imageMetadata ?? [],
  migrationStatus: (v) => v.openstack?.migrationStatus ?? null,
};
