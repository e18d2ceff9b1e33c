/**
 * CSI plugin endpoints (hashicorp/nomad command/agent/csi_endpoint.go, nomad/csi_endpoint.go
 * `CSIPlugin`): `GET /v1/plugins?type=csi` and
 * `GET /v1/plugin/csi/:id`, both blocking on the `csi_plugins` table.
 */
import { goCompare } from '../golang';
import {
  blockingQuery,
  isResult,
  leaderMeta,
  parseQueryOptions,
  rpcAuth,
  rpcErrorResult,
  type HandlerResult,
  type SimContext,
  type SimRequest,
} from '../http';
import type { GoJSON } from '../encode';
import { PERMISSION_DENIED, RpcError } from '../state';
import { pluginStubWire, pluginWire } from '../wire';

/** `CSIPlugin.List`: stubs ordered by ID, `prefix=` supported, no pagination or filter. */
export async function listPlugins(ctx: SimContext, req: SimRequest): Promise<HandlerResult> {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    if (!acl.allowPluginList()) throw new RpcError(PERMISSION_DENIED);
    const r = await blockingQuery(ctx, qo, (ws) => {
      ws.add('csi_plugins');
      const ids = [...ctx.state.plugins.keys()].filter((id) => id.startsWith(qo.prefix)).sort(goCompare);
      const value: GoJSON[] = ids.map((id) => pluginStubWire(ctx.state.pluginView(id)!));
      return { index: ctx.state.tableIndex('csi_plugins'), value };
    });
    return { kind: 'json', value: r.value, meta: leaderMeta(r.index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

/**
 * `CSIPlugin.Get`: a single object. Allocations (the plugin's own allocs) are included only
 * with read-job in the request namespace, filtered to that namespace, null when none. A missing
 * plugin leaves the reply index at 0 (the RPC returns before setting it) → 404.
 */
export async function readPlugin(ctx: SimContext, req: SimRequest, id: string): Promise<HandlerResult> {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    if (!acl.allowPluginRead()) throw new RpcError(PERMISSION_DENIED);
    const withAllocs = acl.allowNsOp(qo.namespace, 'read-job');
    if (id === '') throw new RpcError('missing plugin ID');
    const r = await blockingQuery(ctx, qo, (ws) => {
      ws.add(`plugin:${id}`);
      const view = ctx.state.pluginView(id);
      if (!view) return { index: 0, value: null as GoJSON | null };
      let allocs: GoJSON[] | null = null;
      if (withAllocs) {
        const stubs = ctx.state
          .pluginAllocStubs(view)
          .filter((s) => (s as { Namespace: string }).Namespace === qo.namespace);
        allocs = stubs.length > 0 ? stubs : null;
      }
      return { index: ctx.state.tableIndex('csi_plugins'), value: pluginWire(view, allocs) };
    });
    const meta = leaderMeta(r.index);
    if (r.value === null) return { kind: 'error', status: 404, text: 'plugin not found', meta };
    return { kind: 'json', value: r.value, meta };
  } catch (e) {
    return rpcErrorResult(e);
  }
}
