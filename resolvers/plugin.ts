/** Storage plugins. Detail fields load the full plugin through the request's loader. */
import type { Edge } from '../adapters/listing';
import { pageArray } from '../adapters/listing';
import { NotFoundError, GatewayError } from '../adapters/errors';
import { encodeGlobalId } from '../adapters/ids';
import { pageSize } from '../adapters/input';
import type { Plugin, PluginDetail } from '../adapters/model';
import type { GatewayContext } from '../server/context';
import type { PluginResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import { globalIdArg } from './args';
import { connection, pathOf, reportPartial } from './connection';

/** Nomad plugins are cluster-wide: the id's scope is a fixed placeholder. */
const CLUSTER_SCOPE = '_';

export const pluginId = (p: { backend: string; nativeId: string }): string =>
  encodeGlobalId({ kind: 'Plugin', backend: p.backend, scope: CLUSTER_SCOPE, nativeId: p.nativeId });

async function detail(p: Plugin, ctx: GatewayContext): Promise<PluginDetail> {
  if (p.detail) return p.detail;
  const full = await ctx.loaders.plugin.load({ backend: p.backend, nativeId: p.nativeId });
  if (!full?.detail) throw new NotFoundError(`plugin "${p.nativeId}" no longer exists on backend "${p.backend}"`, { backend: p.backend });
  return full.detail;
}

/** A plugin by global id; null when unknown. */
export function loadPlugin(ctx: GatewayContext, id: string): Promise<Plugin | null> {
  const p = globalIdArg(ctx, id, 'Plugin');
  return ctx.loaders.plugin.load({ backend: p.backend, nativeId: p.nativeId });
}

export const pluginQueries: Pick<QueryResolvers, 'plugins' | 'plugin'> = {
  plugins: async (_p, { backends, first, after }, ctx, info) => {
    const size = pageSize(first, 50);
    const chosen = ctx.registry.select('LIST_PLUGINS', backends, 'backends');
    const failures: GatewayError[] = [];
    const lists = await Promise.all(
      chosen.map((b) =>
        b.listPlugins(ctx.call(b.id)).catch((err: unknown) => {
          if (!(err instanceof GatewayError)) throw err;
          failures.push(err);
          return [] as Plugin[];
        }),
      ),
    );
    reportPartial(ctx, failures, pathOf(info.path));
    const page = pageArray(lists.flat(), size, after);
    return connection(page.edges as Edge<Plugin>[], page.pageInfo);
  },
  plugin: (_p, { id }, ctx) => loadPlugin(ctx, id),
};

export const pluginType: PluginResolvers = {
  id: (p) => pluginId(p),
  backend: (p, _a, ctx) => ctx.registry.forId(p.backend),
  version: async (p, _a, ctx) => (await detail(p, ctx)).version,
  controllerFeatures: async (p, _a, ctx) => (await detail(p, ctx)).controllerFeatures,
  instances: async (p, _a, ctx) => (await detail(p, ctx)).instances,
};
