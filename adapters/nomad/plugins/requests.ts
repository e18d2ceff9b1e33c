/**
 * Nomad's CSI plugin calls (api/csi.go): the plugin list and reads, and the volumes a plugin's
 * controller lists (known to Nomad or not).
 */
import type { CallOptions } from '../../contract/call-options';
import type { NomadClient, NomadResult } from '../client';
import type { WireExternalList, WirePlugin, WirePluginStub } from '../wire/types';
import * as urls from './urls';

/** Volumes as the controller plugin sees them. The next token is in the body, not a header. */
export function listExternal(
  c: NomadClient,
  opts: { pluginId: string; namespace: string; perPage?: number; nextToken?: string },
  o: CallOptions,
): Promise<NomadResult<WireExternalList>> {
  const q = new URLSearchParams({ plugin_id: opts.pluginId, namespace: opts.namespace });
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call(
    {
      method: 'GET',
      path: urls.listExternalVolumesURL(),
      endpoint: 'GET /v1/volumes/external',
      query: q,
      action: `listing external volumes of plugin "${opts.pluginId}"`,
    },
    o,
  );
}

/** CSI plugins, ordered by id; no pagination on the wire. */
export function listPlugins(c: NomadClient, o: CallOptions): Promise<NomadResult<WirePluginStub[]>> {
  return c.call(
    {
      method: 'GET',
      path: urls.listPluginsURL(),
      endpoint: 'GET /v1/plugins',
      query: new URLSearchParams({ type: 'csi' }),
      action: 'listing plugins',
    },
    o,
  );
}

export function readPlugin(c: NomadClient, id: string, o: CallOptions): Promise<NomadResult<WirePlugin>> {
  return c.call(
    {
      method: 'GET',
      path: urls.readPluginURL(id),
      endpoint: 'GET /v1/plugin/csi/:id',
      action: `reading plugin "${id}"`,
    },
    o,
  );
}
