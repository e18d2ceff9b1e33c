/** Snapshots and provider-side (external) volumes. */
import { UnsupportedByBackendError } from '../adapters/errors';
import { decodeGlobalId, encodeGlobalId } from '../adapters/ids';
import { pageSize, safeIdentifier, safeText } from '../adapters/input';
import { pageOpaque } from '../adapters/listing';
import type { ExternalVolumeResolvers, MutationResolvers, QueryResolvers, SnapshotResolvers } from '../schema/generated/resolvers-types';
import { keyValues, namespaceArg, optionalId } from './args';
import { connection } from './connection';
import { volumeRefFromId } from './volume';

const snapshotId = (s: { backend: string; scope: string; nativeId: string }): string =>
  encodeGlobalId({ kind: 'Snapshot', backend: s.backend, scope: s.scope, nativeId: s.nativeId });

export const snapshotQueries: Pick<QueryResolvers, 'snapshots' | 'externalVolumes'> = {
  snapshots: async (_p, { backend, plugin, first, after, secrets }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const pluginArg = safeIdentifier(plugin, 'plugin');
    const kv = keyValues(secrets, 'secrets');
    const size = pageSize(first, 50);
    const page = await pageOpaque((limit, token) => b.listSnapshots(pluginArg, limit, token, kv, ctx.call(b.id)), size, after);
    return connection(page.edges, page.pageInfo);
  },
  externalVolumes: async (_p, { backend, plugin, namespace, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const pluginArg = safeIdentifier(plugin, 'plugin');
    const ns = namespaceArg(namespace, 'namespace', 'default');
    const size = pageSize(first, 50);
    const page = await pageOpaque((limit, token) => b.listExternalVolumes(pluginArg, ns, limit, token, ctx.call(b.id)), size, after);
    return connection(page.edges, page.pageInfo);
  },
};

export const snapshotMutations: Pick<MutationResolvers, 'createSnapshot' | 'deleteSnapshot'> = {
  createSnapshot: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(volume.backend);
    if (!b.capabilities.has('CREATE_SNAPSHOT')) throw new UnsupportedByBackendError(b.id, 'creating snapshots');
    const snapshot = await b.createSnapshot(
      {
        volume,
        name: safeText(input.name, 'input.name', 256),
        pluginId: optionalId(input.plugin, 'input.plugin'),
        parameters: keyValues(input.parameters, 'input.parameters'),
        secrets: keyValues(input.secrets, 'input.secrets'),
      },
      ctx.call(b.id),
    );
    return { snapshot };
  },
  deleteSnapshot: async (_p, { input }, ctx) => {
    const p = decodeGlobalId(input.id, 'Snapshot', 'input.id');
    const b = ctx.registry.forId(p.backend);
    await b.deleteSnapshot(p.scope, p.nativeId, keyValues(input.secrets, 'input.secrets'), ctx.call(b.id));
    return { deletedId: input.id };
  },
};

export const snapshotType: SnapshotResolvers = {
  id: (s) => snapshotId(s),
  backend: (s, _a, ctx) => ctx.registry.forId(s.backend),
  plugin: (s, _a, ctx) => (s.pluginId ? ctx.loaders.plugin.load({ backend: s.backend, nativeId: s.pluginId }) : null),
};

export const externalVolumeType: ExternalVolumeResolvers = {
  backend: (e, _a, ctx) => ctx.registry.forId(e.backend),
};
