/** The Nomad backend's storage-plugin methods: CSI plugins and the volumes their controllers list. */
import type { CallOptions } from '../../contract/call-options';
import type { OpaquePage } from '../../contract/call-answers';
import type { ExternalVolume, Plugin } from '../../contract/model';
import { orNull, type NomadContext } from '../context';
import * as req from './requests';
import { toExternalVolume, toPlugin, toPluginFromStub } from './results';

export async function listPlugins(ctx: NomadContext, o: CallOptions): Promise<Plugin[]> {
  const { data } = await req.listPlugins(ctx.client, o);
  return (data ?? []).map((w) => toPluginFromStub(ctx.backend, w));
}

export async function getPlugin(ctx: NomadContext, pluginId: string, o: CallOptions): Promise<Plugin | null> {
  const read = await orNull(req.readPlugin(ctx.client, pluginId, o));
  return read?.data ? toPlugin(ctx.backend, read.data) : null;
}

export async function listExternalVolumes(
  ctx: NomadContext,
  q: { pluginId: string; namespace: string; limit: number; token: string | null },
  o: CallOptions,
): Promise<OpaquePage<ExternalVolume>> {
  const { data } = await req.listExternal(
    ctx.client,
    { pluginId: q.pluginId, namespace: q.namespace, perPage: q.limit, nextToken: q.token ?? undefined },
    o,
  );
  return {
    items: (data?.Volumes ?? []).map((w) => toExternalVolume(ctx.backend, q.pluginId, w)),
    next: data?.NextToken || null,
  };
}
