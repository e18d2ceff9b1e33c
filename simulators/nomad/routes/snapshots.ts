/**
 * Endpoints answered by the controller plugin rather than the state store (hashicorp/nomad
 * nomad/csi_endpoint.go `ListExternal`, `CreateSnapshot`, `DeleteSnapshot`, `ListSnapshots`):
 * `/v1/volumes/external` and `/v1/volumes/snapshot` (create, delete, list). Their RPCs never fill
 * QueryMeta, so they answer `X-Nomad-Index: 0`, `X-Nomad-KnownLeader: false`, never block, and page
 * with the plugin's opaque token carried in the body (`NextToken`).
 */
import { CSI_LIST_CAPS } from '../acl';
import { decodeGoJSON, GoDecodeError, snapshotCreateRequestType } from '../decode';
import type { GoJSON } from '../encode';
import { goQuote, multierror } from '../golang';
import {
  isResult,
  META_NONE,
  parseCSISecrets,
  parseQueryOptions,
  qget,
  rpcAuth,
  rpcErrorResult,
  writeRequest,
  type HandlerResult,
  type SimContext,
  type SimRequest,
} from '../http';
import { ProviderError } from '../provider';
import { PERMISSION_DENIED, RpcError } from '../state';
import { externalVolumeWire, snapshotWire } from '../wire';

/** `CSIVolume.ListExternal`: the plugin's ListVolumes, whether or not Nomad knows the volumes. */
export function listExternalVolumes(ctx: SimContext, req: SimRequest): HandlerResult {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  const pluginId = qget(req, 'plugin_id');
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    // The request namespace, not the volumes' (they may not even be registered).
    if (!acl.allowAny(qo.namespace, CSI_LIST_CAPS)) throw new RpcError(PERMISSION_DENIED);
    const view = ctx.state.pluginView(pluginId);
    if (!view) throw new RpcError('no such plugin');
    if (!ctx.state.pluginHasCapability(view, 'SupportsListVolumes'))
      throw new RpcError('unimplemented for this plugin');
    let page;
    try {
      page = ctx.state.provider(pluginId).listVolumes(qo.perPage, qo.nextToken);
    } catch (e) {
      if (e instanceof ProviderError) throw new RpcError(`controller list volumes: ${e.message}`);
      throw e;
    }
    const entries =
      qo.perPage > 0 && qo.perPage < page.entries.length ? page.entries.slice(0, qo.perPage) : page.entries;
    const published = view.record.capabilities.SupportsListVolumesAttachedNodes;
    return {
      kind: 'json',
      value: {
        Volumes: entries.map((v) => externalVolumeWire(v, published)),
        NextToken: page.nextToken,
        Index: 0,
        LastContact: 0,
        KnownLeader: false,
      },
      meta: META_NONE,
    };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

/** `CSIVolume.CreateSnapshot`: per-snapshot errors accumulate; any error fails the request. */
export function createSnapshots(ctx: SimContext, req: SimRequest): HandlerResult {
  if (!req.hasBody) return { kind: 'error', status: 400, text: 'Request body is empty' };
  let d: Record<string, unknown>;
  try {
    d = decodeGoJSON(req.body, snapshotCreateRequestType);
  } catch (e) {
    if (e instanceof GoDecodeError) return { kind: 'error', status: 400, text: e.message };
    throw e;
  }
  const wr = writeRequest(ctx, req);
  try {
    const acl = rpcAuth(ctx, req, wr.region);
    if (!acl.allowAny(wr.namespace, ['csi-write-volume']) || !acl.allowPluginRead())
      throw new RpcError(PERMISSION_DENIED);
    const errs: string[] = [];
    const created: GoJSON[] = [];
    for (const snap of (d.Snapshots as Array<Record<string, unknown> | null> | null) ?? []) {
      if (snap === null) throw new RpcError('snapshot cannot be nil');
      const sourceId = snap.SourceVolumeID as string;
      const vol = ctx.state.getVolume(wr.namespace, sourceId);
      if (!vol) {
        errs.push(`no such volume ${goQuote(sourceId)}`);
        continue;
      }
      const pluginId = (snap.PluginID as string) || vol.PluginID;
      const view = ctx.state.pluginView(pluginId);
      if (!view) {
        errs.push(`no such plugin ${goQuote(pluginId)}`);
        continue;
      }
      if (!ctx.state.pluginHasCapability(view, 'SupportsCreateDeleteSnapshot')) {
        errs.push(`plugin ${goQuote(pluginId)} does not support snapshot`);
        continue;
      }
      const s = ctx.state.provider(pluginId).createSnapshot(vol.ExternalID, new Date());
      // Only the provider's fields are filled in the reply (nomad/csi_endpoint.go `CreateSnapshot`).
      created.push(snapshotWire(s, '', s.IsReady));
    }
    if (errs.length > 0) throw new RpcError(multierror(errs));
    return {
      kind: 'json',
      value: {
        Snapshots: created.length > 0 ? created : null,
        Index: 0,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      },
      meta: META_NONE,
    };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

/** `CSIVolume.DeleteSnapshot` (`?plugin_id=&snapshot_id=`). */
export function deleteSnapshot(ctx: SimContext, req: SimRequest): HandlerResult {
  const wr = writeRequest(ctx, req);
  const pluginId = qget(req, 'plugin_id');
  const snapshotId = qget(req, 'snapshot_id');
  // Parsed like Nomad (X-Nomad-CSI-Secrets); the simulated provider accepts any secrets.
  const secrets = parseCSISecrets(req);
  try {
    const acl = rpcAuth(ctx, req, wr.region);
    if (!acl.allowAny(wr.namespace, ['csi-write-volume']) || !acl.allowPluginRead())
      throw new RpcError(PERMISSION_DENIED);
    const errs: string[] = [];
    const view = ctx.state.pluginView(pluginId);
    if (!view) errs.push('no such plugin');
    else if (!ctx.state.pluginHasCapability(view, 'SupportsCreateDeleteSnapshot'))
      errs.push('plugin does not support snapshot');
    else ctx.state.provider(pluginId).deleteSnapshot(snapshotId, secrets);
    if (errs.length > 0) throw new RpcError(multierror(errs));
    return { kind: 'empty', meta: META_NONE };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

/** `CSIVolume.ListSnapshots`: entries carry the queried PluginID, SourceVolumeID is "". */
export function listSnapshots(ctx: SimContext, req: SimRequest): HandlerResult {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  const pluginId = qget(req, 'plugin_id');
  const secrets = parseCSISecrets(req);
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    if (!acl.allowAny(qo.namespace, CSI_LIST_CAPS)) throw new RpcError(PERMISSION_DENIED);
    const view = ctx.state.pluginView(pluginId);
    if (!view) throw new RpcError('no such plugin');
    if (!ctx.state.pluginHasCapability(view, 'SupportsListSnapshots'))
      throw new RpcError('plugin does not support listing snapshots');
    let page;
    try {
      page = ctx.state.provider(pluginId).listSnapshots(qo.perPage, qo.nextToken, secrets);
    } catch (e) {
      if (e instanceof ProviderError) throw new RpcError(`controller list snapshots: ${e.message}`);
      throw e;
    }
    const entries =
      qo.perPage > 0 && qo.perPage < page.entries.length ? page.entries.slice(0, qo.perPage) : page.entries;
    const now = Date.now();
    return {
      kind: 'json',
      value: {
        Snapshots: entries.map((s) => snapshotWire(s, pluginId, s.IsReady || now >= s.readyAt)),
        NextToken: page.nextToken,
        Index: 0,
        LastContact: 0,
        KnownLeader: false,
      },
      meta: META_NONE,
    };
  } catch (e) {
    return rpcErrorResult(e);
  }
}
