/** Nomad CSI plugins and the volumes their controllers know. Fields marked (read) load the full plugin. */
import { NotFoundError } from '../../adapters/contract/errors';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { pageSize } from '../../adapters/contract/input';
import { mergeParts, pageArray, pageOpaque, readEachBackend } from '../../adapters/listing';
import type { Plugin, PluginDetail } from '../../adapters/contract/model';
import type { GatewayContext } from '../../domain/context';
import type { QueryResolvers, StoragePluginResolvers } from '../../schema/generated/resolvers-types';
import { globalIdArg, idArg, namespaceArg } from '../args';
import { connection, mergedConnection } from '../connection';

/** Nomad plugins are cluster-wide: the id's scope is a fixed placeholder. */
const CLUSTER_SCOPE = '_';

export const pluginId = (p: { backend: string; nativeId: string }): string =>
  encodeGlobalId({ kind: 'Plugin', backend: p.backend, scope: CLUSTER_SCOPE, nativeId: p.nativeId });

async function detail(p: Plugin, ctx: GatewayContext): Promise<PluginDetail> {
  if (p.detail) return p.detail;
  const full = await ctx.loaders.plugin.load({ backend: p.backend, nativeId: p.nativeId });
  if (!full?.detail)
    throw new NotFoundError(`plugin "${p.nativeId}" no longer exists on backend "${p.backend}"`, {
      backend: p.backend,
    });
  return full.detail;
}

export const pluginQueries: Pick<QueryResolvers, 'storagePlugins' | 'storagePlugin' | 'nomadExternalVolumes'> = {
  storagePlugins: async (_p, { backends, first, after }, ctx) => {
    const size = pageSize(first, 50);
    const chosen = ctx.registry
      .select('LIST_PLUGINS', backends, 'backends')
      .flatMap((backend) => (backend.storagePlugins ? [{ backend, plugins: backend.storagePlugins }] : []));
    // All backends at once, by the merged-field rule; a backend left out stands where its plugins would start.
    const merged = mergeParts(
      await readEachBackend(
        chosen,
        (id) => ctx.call(id),
        (b, o) => b.plugins.listPlugins(o),
      ),
      (l) => l,
    );
    const page = pageArray(merged.items, size, after);
    // Clamped to this page.
    const onPage = merged.omissions.map((o) => ({
      ...o,
      at: Math.min(Math.max(o.at - page.start, 0), page.edges.length),
    }));
    return mergedConnection(ctx, page.edges, page.pageInfo, onPage);
  },
  storagePlugin: (_p, { id }, ctx) => {
    const p = globalIdArg(ctx, id, 'Plugin');
    return ctx.loaders.plugin.load({ backend: p.backend, nativeId: p.nativeId });
  },
  nomadExternalVolumes: async (_p, { backend, plugin, namespace, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const plugins = ctx.registry.capable(b, 'storagePlugins');
    const pluginArg = idArg(b, 'plugin', plugin, 'plugin');
    const ns = namespaceArg(namespace, 'namespace', 'default', false, b);
    const page = await pageOpaque(
      (limit, token) =>
        plugins.listExternalVolumes({ pluginId: pluginArg, namespace: ns, limit, token }, ctx.call(b.id)),
      pageSize(first, 50),
      after,
    );
    return connection(page.edges, page.pageInfo);
  },
};

export const pluginType: StoragePluginResolvers = {
  id: (p) => pluginId(p),
  backend: (p, _a, ctx) => ctx.registry.forId(p.backend),
  version: async (p, _a, ctx) => (await detail(p, ctx)).version,
  controllerFeatures: async (p, _a, ctx) => (await detail(p, ctx)).controllerFeatures,
  instances: async (p, _a, ctx) => (await detail(p, ctx)).instances,
};
