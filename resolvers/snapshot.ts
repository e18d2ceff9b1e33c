/** Snapshots and provider-side (external) volumes. */
import { BadUserInputError, UnsupportedByBackendError } from '../adapters/errors';
import { encodeGlobalId } from '../adapters/ids';
import { pageSize, safeText } from '../adapters/input';
import { pageOpaque } from '../adapters/listing';
import type { ExternalVolumeResolvers, MutationResolvers, QueryResolvers, SnapshotResolvers } from '../schema/generated/resolvers-types';
import { globalIdArg, idArg, keyValues, namespaceArg, optionalIdArg, optionalText, secretList } from './args';
import { track } from './operation';
import { connection } from './connection';
import { volumeRefFromId } from './volume';

export const snapshotId = (s: { backend: string; scope: string; nativeId: string }): string =>
  encodeGlobalId({ kind: 'Snapshot', backend: s.backend, scope: s.scope, nativeId: s.nativeId });

export const snapshotQueries: Pick<QueryResolvers, 'snapshots' | 'externalVolumes'> = {
  snapshots: async (_p, { backend, plugin, first, after, secrets }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    // Nomad lists snapshots per plugin; OpenStack per project (the caller's).
    if (b.kind === 'NOMAD' && !plugin) throw new BadUserInputError('Nomad lists snapshots per plugin: give plugin', 'plugin');
    const pluginArg = plugin ? idArg(b, 'plugin', plugin, 'plugin') : '';
    const kv = secretList(secrets, 'secrets');
    const size = pageSize(first, 50);
    const page = await pageOpaque((limit, token) => b.listSnapshots(pluginArg, limit, token, kv, ctx.call(b.id)), size, after);
    return connection(page.edges, page.pageInfo);
  },
  externalVolumes: async (_p, { backend, plugin, namespace, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const pluginArg = idArg(b, 'plugin', plugin, 'plugin');
    const ns = namespaceArg(namespace, 'namespace', 'default', false, b);
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
    const accepted = await b.createSnapshot(
      {
        volume,
        name: safeText(input.name, 'input.name', 256),
        pluginId: optionalIdArg(b, 'plugin', input.plugin, 'input.plugin'),
        parameters: keyValues(input.parameters, 'input.parameters'),
        secrets: secretList(input.secrets, 'input.secrets'),
        description: optionalText(input.description, 'input.description'),
        force: input.force ?? undefined,
      },
      ctx.call(b.id),
    );
    const snapshot = accepted.result;
    const operation = await track(ctx, 'CREATE_SNAPSHOT', { backend: b.id, scope: snapshot.scope, id: snapshotId(snapshot) }, accepted);
    return { snapshot, operation };
  },
  deleteSnapshot: async (_p, { input }, ctx) => {
    const p = globalIdArg(ctx, input.id, 'Snapshot', 'input.id');
    const b = ctx.registry.forId(p.backend);
    const accepted = await b.deleteSnapshot(p.scope, p.nativeId, secretList(input.secrets, 'input.secrets'), ctx.call(b.id));
    return { deletedId: input.id, operation: await track(ctx, 'DELETE_SNAPSHOT', { backend: b.id, scope: p.scope, id: input.id }, accepted) };
  },
};

export const snapshotType: SnapshotResolvers = {
  id: (s) => snapshotId(s),
  backend: (s, _a, ctx) => ctx.registry.forId(s.backend),
  plugin: (s, _a, ctx) => (s.pluginId ? ctx.loaders.plugin.load({ backend: s.backend, nativeId: s.pluginId }) : null),
  volume: (s, _a, ctx) => (s.sourceVolume ? ctx.loaders.volume.load(s.sourceVolume) : null),
  backendStatus: (s) => s.backendStatus ?? null,
  description: (s) => s.description ?? null,
};

export const externalVolumeType: ExternalVolumeResolvers = {
  backend: (e, _a, ctx) => ctx.registry.forId(e.backend),
};
