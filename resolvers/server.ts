/** OpenStack servers (Nova) and the volume attachments Nova lists for them. */
import { pageSize } from '../adapters/input';
import { pageOpaque } from '../adapters/listing';
import type { OpenStackServerResolvers, QueryResolvers, ServerVolumeAttachmentResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { idArg } from './args';
import { connection } from './connection';
import type { ServerRef } from './server-ref';

/** The caller's project on an OpenStack backend: servers are addressed within it. */
const load = (ctx: GatewayContext, s: ServerRef) => ctx.loaders.server.load({ backend: s.backend, scope: s.scope, id: s.id });

export const serverQueries: Pick<QueryResolvers, 'servers' | 'server' | 'serverVolumeAttachment'> = {
  servers: async (_p, { backend, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const size = pageSize(first, 50);
    const page = await pageOpaque((limit, token) => b.listServers('', limit, token, ctx.call(b.id)), size, after);
    // Prime the loader: nested fields then need no further Nova call.
    const edges = page.edges.map((e) => {
      const ref: ServerRef = { kind: 'OpenStackServer', backend: b.id, scope: e.node.projectId, id: e.node.id };
      ctx.loaders.server.prime({ backend: b.id, scope: ref.scope, id: ref.id }, e.node);
      return { ...e, node: ref };
    });
    return connection(edges, page.pageInfo);
  },
  server: async (_p, { backend, id }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const sid = idArg(b, 'server', id, 'id');
    const found = await b.getServers('', [sid], ctx.call(b.id));
    const s = found.get(sid);
    if (!s) return null;
    ctx.loaders.server.prime({ backend: b.id, scope: s.projectId, id: s.id }, s);
    return { kind: 'OpenStackServer', backend: b.id, scope: s.projectId, id: s.id };
  },
  serverVolumeAttachment: async (_p, { backend, serverId, volumeId }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    return b.getServerVolumeAttachment('', idArg(b, 'server', serverId, 'serverId'), idArg(b, 'volume', volumeId, 'volumeId'), ctx.call(b.id));
  },
};

export const openStackServerType: OpenStackServerResolvers = {
  backend: (s, _a, ctx) => ctx.registry.forId(s.backend),
  name: async (s, _a, ctx) => (await load(ctx, s))?.name ?? null,
  status: async (s, _a, ctx) => (await load(ctx, s))?.status ?? null,
  vmState: async (s, _a, ctx) => (await load(ctx, s))?.vmState ?? null,
  volumeAttachments: (s, _a, ctx) => ctx.loaders.serverAttachments.load({ backend: s.backend, scope: s.scope, id: s.id }),
};

export const serverVolumeAttachmentType: ServerVolumeAttachmentResolvers = {
  server: (a) => ({ kind: 'OpenStackServer', backend: a.backend, scope: a.projectId, id: a.serverId }),
  volume: (a, _x, ctx) => ctx.loaders.volume.load({ backend: a.backend, namespace: a.projectId, nativeId: a.volumeId }),
};
