/**
 * CSI volume endpoints (Nomad's API docs, volumes): list, read, register, create, deregister,
 * delete and detach. Each handler is the agent's HTTP handler (command/agent/csi_endpoint.go)
 * fused with the server RPC it calls (nomad/csi_endpoint.go), keeping their checks in order.
 */
import { CSI_LIST_CAPS, type NsCapability } from '../acl';
import { parseBexpr, BexprEvalError, BexprPanic, BexprParseError, evaluateBexpr, type Expr } from '../bexpr';
import { copyVolume, inUse } from '../claims';
import { createRequestType, decodeGoJSON, GoDecodeError, registerRequestType } from '../decode';
import type { GoJSON } from '../encode';
import { goCompare, goQuote, humanizeBytes, multierror, parseBool } from '../golang';
import {
  blockingQuery,
  isResult,
  leaderMeta,
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
import type { CSIMountOptions, CSITopology, CSITopologyRequest, CSIVolume, CSIVolumeClaim } from '../model';
import { allocTerminal, ClaimMode, ClaimState } from '../model';
import { ProviderError } from '../provider';
import { volumeGoVal } from '../reflect';
import { PERMISSION_DENIED, RpcError, volKey } from '../state';
import type { PluginView } from '../wire';
import { volumeStubWire, volumeWire } from '../wire';

const READ_CAPS: NsCapability[] = ['csi-read-volume', 'csi-mount-volume', 'read-job'];

// ---------------------------------------------------------------------------------------------
// GET /v1/volumes?type=csi

/** `CSIVolume.List`, paged by nomad/state/paginator/. */
export async function listVolumes(ctx: SimContext, req: SimRequest): Promise<HandlerResult> {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  const pluginId = qget(req, 'plugin_id');
  const nodeId = qget(req, 'node_id');
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    const ns = qo.namespace;
    if (!acl.allowAny(ns, CSI_LIST_CAPS)) throw new RpcError(PERMISSION_DENIED);
    // namespace=* lists only the namespaces the token may list.
    let allowedNs: Set<string> | null = null;
    if (!acl.management) {
      allowedNs = new Set([...ctx.state.namespaces.keys()].filter((n) => acl.allowAny(n, CSI_LIST_CAPS)));
    }
    let expr: Expr | null = null;
    if (qo.filter !== '') {
      try {
        expr = parseBexpr(qo.filter);
      } catch (e) {
        if (!(e instanceof BexprParseError)) throw e;
        throw new RpcError(`failed to create result paginator: failed to read filter expression: ${e.message}`, 400);
      }
    }
    const result = await blockingQuery(ctx, qo, (ws) => {
      const items = volumeIterator(ctx, ws, ns, qo.prefix, pluginId, nodeId);
      const out: GoJSON[] = [];
      let nextToken = '';
      let found = qo.nextToken === '';
      let count = 0;
      let completed = true;
      for (const raw of items) {
        // A nil from the node_id iterator ends the page (SliceIterator returns nil).
        if (raw === null) break;
        const token = `${raw.Namespace}.${raw.ID}`;
        nextToken = token;
        const cmp = goCompare(token, qo.nextToken);
        const passed = qo.reverse ? cmp === 1 : cmp === -1;
        if (!found && passed) continue;
        if (expr) {
          let allow: boolean;
          try {
            allow = evaluateBexpr(expr, volumeGoVal(raw));
          } catch (e) {
            if (e instanceof BexprEvalError) throw new RpcError(`failed to read result page: ${e.message}`, 400);
            if (e instanceof BexprPanic) throw new RpcError(e.message);
            throw e;
          }
          if (!allow) continue;
        }
        if (pluginId !== '' && raw.PluginID !== pluginId) continue;
        if (ns !== '*' && raw.Namespace !== ns) continue;
        if (allowedNs !== null && !allowedNs.has(raw.Namespace)) continue;
        found = true;
        ws.add(`plugin:${raw.PluginID}`);
        const stub = volumeStubWire(ctx.state.denormalizePlugins(raw));
        count++;
        if (qo.perPage !== 0 && count > qo.perPage) {
          completed = false;
          break;
        }
        out.push(stub);
      }
      if (completed) nextToken = '';
      return { index: ctx.state.tableIndex('csi_volumes'), out, nextToken };
    });
    return { kind: 'json', value: result.out, meta: leaderMeta(result.index, result.nextToken) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

/**
 * The state-store iterator the list uses (precedence node_id > plugin_id > prefix > namespace
 * scan), including its quirks: the plugin_id iterator drops every volume whose namespace
 * differs from the request's — so `namespace=*` yields nothing — and ignores the prefix for
 * volumes in the request namespace; the node_id iterator has no order and stops at a volume
 * that no longer exists.
 */
function volumeIterator(
  ctx: SimContext,
  ws: Set<string>,
  ns: string,
  prefix: string,
  pluginId: string,
  nodeId: string,
): Array<CSIVolume | null> {
  const st = ctx.state;
  if (nodeId !== '') {
    ws.add(`node_allocs:${nodeId}`);
    const ids = new Map<string, string>();
    const allocs = [...st.allocs.values()].filter((a) => a.NodeID === nodeId).sort((a, b) => goCompare(a.ID, b.ID));
    for (const a of allocs) {
      if (!(a.DesiredStatus === 'run' || a.ClientStatus === 'running') || a.volumes.length === 0) continue;
      for (const v of a.volumes) ids.set(v.Source, a.Namespace);
    }
    const out: Array<CSIVolume | null> = [];
    for (const [id, vns] of ids) {
      if (!id.startsWith(prefix)) continue;
      ws.add(`vol:${volKey(vns, id)}`);
      out.push(st.getVolume(vns, id) ?? null);
    }
    return out;
  }
  if (pluginId !== '') {
    // No watch on the table here: memdb's plugin_id iterator isn't added to the watch set.
    return st
      .sortedVolumes()
      .filter((v) => v.PluginID === pluginId)
      .filter((v) => !(v.Namespace !== ns && v.ID.startsWith(prefix)));
  }
  ws.add('csi_volumes');
  if (prefix !== '') {
    return st.sortedVolumes().filter((v) => (ns === '*' || v.Namespace === ns) && v.ID.startsWith(prefix));
  }
  if (ns !== '*') return st.sortedVolumes().filter((v) => v.Namespace === ns);
  return st.sortedVolumes();
}

/** GET /v1/volumes?type=host — dynamic host volumes are not simulated: always an empty list. */
export function listHostVolumes(ctx: SimContext, req: SimRequest): HandlerResult {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    if (!acl.allowAny(qo.namespace, ['host-volume-read'])) throw new RpcError(PERMISSION_DENIED);
    return { kind: 'json', value: [], meta: leaderMeta(ctx.state.tableIndex('host_volumes')) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// GET /v1/volume/csi/:id

/** `CSIVolume.Get`. */
export async function readVolume(ctx: SimContext, req: SimRequest, id: string): Promise<HandlerResult> {
  const qo = parseQueryOptions(ctx, req);
  if (isResult(qo)) return qo;
  try {
    const acl = rpcAuth(ctx, req, qo.region);
    const ns = qo.namespace;
    if (!acl.allowAny(ns, READ_CAPS)) throw new RpcError(PERMISSION_DENIED);
    if (id === '') throw new RpcError('missing volume ID');
    const r = await blockingQuery(ctx, qo, (ws) => {
      ws.add(`vol:${volKey(ns, id)}`);
      const stored = ctx.state.getVolume(ns, id);
      let value: GoJSON | null = null;
      if (stored) {
        ws.add(`plugin:${stored.PluginID}`);
        const { volume, stubs } = ctx.state.denormalizeAllocs(ctx.state.denormalizePlugins(stored), ws);
        value = volumeWire(volume, stubs);
      }
      return { index: ctx.state.tableIndex('csi_volumes'), value };
    });
    const meta = leaderMeta(r.index);
    if (r.value === null) return { kind: 'error', status: 404, text: 'volume not found', meta };
    return { kind: 'json', value: r.value, meta };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// Request volumes → model

type Decoded = Record<string, unknown>;

function topologyFrom(o: unknown): CSITopology | null {
  if (o === null || o === undefined) return null;
  return { Segments: ((o as Decoded).Segments as Map<string, string> | null) ?? null };
}

function topologyListFrom(o: unknown): Array<CSITopology | null> | null {
  return o === null || o === undefined ? null : (o as unknown[]).map(topologyFrom);
}

/** Converts a decoded `structs.CSIVolume` into the state model. */
export function volumeFromDecoded(d: Decoded): CSIVolume {
  const rt = d.RequestedTopologies as Decoded | null;
  const mo = d.MountOptions as Decoded | null;
  const caps = d.RequestedCapabilities as Array<Decoded | null> | null;
  const keys = (m: unknown): Map<string, null> | null =>
    m === null ? null : new Map([...(m as Map<string, unknown>).keys()].map((k) => [k, null]));
  return {
    ID: d.ID as string,
    Name: d.Name as string,
    ExternalID: d.ExternalID as string,
    Namespace: d.Namespace as string,
    RequestedTopologies: rt
      ? { Required: topologyListFrom(rt.Required), Preferred: topologyListFrom(rt.Preferred) }
      : null,
    Topologies: topologyListFrom(d.Topologies),
    AccessMode: d.AccessMode as string,
    AttachmentMode: d.AttachmentMode as string,
    MountOptions: mo ? { FSType: mo.FSType as string, MountFlags: mo.MountFlags as string[] | null } : null,
    Secrets: d.Secrets as Map<string, string> | null,
    Parameters: d.Parameters as Map<string, string> | null,
    Context: d.Context as Map<string, string> | null,
    Capacity: d.Capacity as bigint,
    RequestedCapacityMin: d.RequestedCapacityMin as bigint,
    RequestedCapacityMax: d.RequestedCapacityMax as bigint,
    RequestedCapabilities:
      caps === null
        ? null
        : caps.map((c) =>
            c === null ? null : { AttachmentMode: c.AttachmentMode as string, AccessMode: c.AccessMode as string },
          ),
    CloneID: d.CloneID as string,
    SnapshotID: d.SnapshotID as string,
    ReadAllocs: keys(d.ReadAllocs),
    WriteAllocs: keys(d.WriteAllocs),
    ReadClaims: null,
    WriteClaims: null,
    PastClaims: null,
    Schedulable: d.Schedulable as boolean,
    PluginID: d.PluginID as string,
    Provider: d.Provider as string,
    ProviderVersion: d.ProviderVersion as string,
    ControllerRequired: d.ControllerRequired as boolean,
    ControllersHealthy: Number(d.ControllersHealthy),
    ControllersExpected: Number(d.ControllersExpected),
    NodesHealthy: Number(d.NodesHealthy),
    NodesExpected: Number(d.NodesExpected),
    ResourceExhausted: d.ResourceExhausted as string | null,
    CreateIndex: Number(d.CreateIndex),
    ModifyIndex: Number(d.ModifyIndex),
    CreateTime: d.CreateTime as bigint,
    ModifyTime: d.ModifyTime as bigint,
  };
}

/** `CSIVolume.Validate()`: all problems joined, 500 on the wire. */
export function validateVolume(v: CSIVolume): string | null {
  const errs: string[] = [];
  if (v.ID === '') errs.push('missing volume id');
  if (v.PluginID === '') errs.push('missing plugin id');
  if (v.Namespace === '') errs.push('missing namespace');
  if (v.SnapshotID !== '' && v.CloneID !== '') errs.push('only one of snapshot_id and clone_id is allowed');
  if ((v.RequestedCapabilities?.length ?? 0) === 0) errs.push('must include at least one capability block');
  if (v.RequestedTopologies) {
    for (const t of v.RequestedTopologies.Required ?? [])
      if (t && (t.Segments?.size ?? 0) === 0) errs.push('required topology is missing segments field');
    for (const t of v.RequestedTopologies.Preferred ?? [])
      if (t && (t.Segments?.size ?? 0) === 0) errs.push('preferred topology is missing segments field');
  }
  return errs.length > 0 ? `validation: ${errs.join(', ')}` : null;
}

/** `pluginValidateVolume`: the plugin must exist (and have a healthy controller if required). */
export function pluginValidate(ctx: SimContext, v: CSIVolume): PluginView {
  const view = ctx.state.pluginView(v.PluginID);
  if (!view) throw new RpcError(`no CSI plugin named: ${v.PluginID} could be found`);
  if (view.record.ControllerRequired && view.ControllersHealthy < 1) {
    throw new RpcError(`no healthy controllers for CSI plugin: ${v.PluginID}`);
  }
  v.Provider = view.record.Provider;
  v.ProviderVersion = view.record.Version;
  return view;
}

function mapsEqual(a: Map<string, string> | null, b: Map<string, string> | null): boolean {
  const x = a ?? new Map<string, string>();
  const y = b ?? new Map<string, string>();
  if (x.size !== y.size) return false;
  for (const [k, v] of x) if (y.get(k) !== v) return false;
  return true;
}

function topologyRequestEqual(a: CSITopologyRequest | null, b: CSITopologyRequest | null): boolean {
  if (a === null || b === null) return a === b;
  const listEq = (x: Array<CSITopology | null> | null, y: Array<CSITopology | null> | null): boolean => {
    const xs = x ?? [];
    const ys = y ?? [];
    return xs.length === ys.length && xs.every((t, i) => mapsEqual(t?.Segments ?? null, ys[i]?.Segments ?? null));
  };
  return listEq(a.Required, b.Required) && listEq(a.Preferred, b.Preferred);
}

function mountOptionsEqual(a: CSIMountOptions | null, b: CSIMountOptions | null): boolean {
  if (a === null || b === null) return a === b;
  const fa = [...new Set(a.MountFlags ?? [])].sort();
  const fb = [...new Set(b.MountFlags ?? [])].sort();
  return a.FSType === b.FSType && fa.length === fb.length && fa.every((f, i) => f === fb[i]);
}

/**
 * `CSIVolume.Merge`: mutable fields are taken from `other`; immutable ones must match
 * (returns go-multierror text or null).
 */
function mergeVolume(v: CSIVolume, other: CSIVolume): string | null {
  const errs: string[] = [];
  if (v.Name !== other.Name && other.Name !== '') errs.push('volume name cannot be updated');
  if (v.ExternalID !== other.ExternalID && other.ExternalID !== '') errs.push('volume external ID cannot be updated');
  if (v.PluginID !== other.PluginID) errs.push('volume plugin ID cannot be updated');
  if (v.CloneID !== other.CloneID && other.CloneID !== '') errs.push('volume clone ID cannot be updated');
  if (v.SnapshotID !== other.SnapshotID && other.SnapshotID !== '') errs.push('volume snapshot ID cannot be updated');
  if (v.AccessMode !== '' || v.AttachmentMode !== '') {
    const ok = (other.RequestedCapabilities ?? []).some(
      (c) => c && c.AccessMode === v.AccessMode && c.AttachmentMode === v.AttachmentMode,
    );
    if (ok) v.RequestedCapabilities = other.RequestedCapabilities;
    else errs.push('volume requested capabilities update was not compatible with existing capability in use');
  } else {
    v.RequestedCapabilities = other.RequestedCapabilities;
  }
  if ((v.Topologies?.length ?? 0) > 0 && !topologyRequestEqual(v.RequestedTopologies, other.RequestedTopologies)) {
    errs.push('volume topology request update was not compatible with existing topology');
  }
  if (inUse(v)) {
    if (other.MountOptions !== null && !mountOptionsEqual(v.MountOptions, other.MountOptions)) {
      errs.push('can not update mount options while volume is in use');
    }
  } else if (other.MountOptions !== null) {
    const mo = v.MountOptions ?? { FSType: '', MountFlags: null };
    if (other.MountOptions.FSType !== '') mo.FSType = other.MountOptions.FSType;
    if (other.MountOptions.MountFlags !== null) mo.MountFlags = other.MountOptions.MountFlags;
    v.MountOptions = mo;
  }
  v.Secrets = other.Secrets;
  if ((other.Parameters?.size ?? 0) !== 0 && !mapsEqual(v.Parameters, other.Parameters))
    errs.push('volume parameters cannot be updated');
  v.Context = other.Context;
  return errs.length > 0 ? multierror(errs) : null;
}

/** `expandVolume`: validates the capacity range and grows the provider volume if needed. */
function expandVolume(ctx: SimContext, view: PluginView, v: CSIVolume, newMin: bigint, newMax: bigint): string | null {
  if (newMax === 0n && newMin === 0n) return null;
  if (v.RequestedCapacityMax === newMax && v.RequestedCapacityMin === newMin) return null;
  if (newMax > 0n) {
    if (newMax < newMin)
      return `max requested capacity (${humanizeBytes(newMax)}) less than or equal to min (${humanizeBytes(newMin)})`;
    if (newMax < v.Capacity)
      return `max requested capacity (${humanizeBytes(newMax)}) less than or equal to current (${humanizeBytes(v.Capacity)})`;
  }
  v.RequestedCapacityMin = newMin;
  v.RequestedCapacityMax = newMax;
  if (newMin <= v.Capacity) return null;
  if (!ctx.state.pluginHasCapability(view, 'SupportsExpand'))
    return 'expand is not implemented by this controller plugin';
  try {
    v.Capacity = ctx.state.provider(view.record.ID).expandVolume(v.ExternalID, newMin);
  } catch (e) {
    if (e instanceof ProviderError) return `unable to expand volume: controller expand volume: ${e.message}`;
    throw e;
  }
  return null;
}

/** `reconcileVolume` = Merge + expandVolume. */
function reconcileVolume(ctx: SimContext, view: PluginView, v: CSIVolume, update: CSIVolume): string | null {
  return mergeVolume(v, update) ?? expandVolume(ctx, view, v, update.RequestedCapacityMin, update.RequestedCapacityMax);
}

/**
 * `controllerValidateVolume`: with a controller plugin, ControllerValidateVolume runs on a
 * client; the simulated provider rejects volumes it doesn't have (as the EBS driver does).
 */
function controllerValidate(ctx: SimContext, view: PluginView, v: CSIVolume): void {
  if (!view.record.ControllerRequired) return;
  const remote = v.ExternalID !== '' ? v.ExternalID : v.ID;
  if (!ctx.state.provider(view.record.ID).volumes.has(remote)) {
    throw new RpcError(
      `controller validate volume: volume ${goQuote(remote)} could not be found: rpc error: code = NotFound desc = Volume not found`,
    );
  }
}

function decodeBody(req: SimRequest, type: typeof registerRequestType): Decoded | HandlerResult {
  if (!req.hasBody) return { kind: 'error', status: 400, text: 'Request body is empty' };
  try {
    return decodeGoJSON(req.body, type);
  } catch (e) {
    if (e instanceof GoDecodeError) return { kind: 'error', status: 400, text: e.message };
    throw e;
  }
}

function requestVolumes(d: Decoded): CSIVolume[] {
  const list = (d.Volumes as Array<Decoded | null> | null) ?? [];
  if (list.length === 0) throw new RpcError('missing volume definition');
  return list.map((v) => {
    // Go dereferences each element: a JSON null in the list is a nil-pointer panic server-side.
    if (v === null) throw new RpcError('runtime error: invalid memory address or nil pointer dereference');
    return volumeFromDecoded(v);
  });
}

function envelope(vols: CSIVolume[], index: number): GoJSON {
  return {
    Volumes: vols.map((v) => volumeWire(v, [])),
    Warnings: '',
    Index: index,
    LastContact: 0,
    KnownLeader: true,
    NextToken: '',
  };
}

// ---------------------------------------------------------------------------------------------
// PUT /v1/volume/csi/:id, PUT|POST /v1/volumes

/** Volume writes need `csi-write-volume` in the request namespace plus `plugin:read`. */
function authorizeVolumeWrite(ctx: SimContext, req: SimRequest, wr: ReturnType<typeof writeRequest>): void {
  const acl = rpcAuth(ctx, req, wr.region);
  if (!acl.allowAny(wr.namespace, ['csi-write-volume']) || !acl.allowPluginRead())
    throw new RpcError(PERMISSION_DENIED);
}

/** `CSIVolume.Register`. The path id is ignored. */
export function registerVolumes(ctx: SimContext, req: SimRequest): HandlerResult {
  const d = decodeBody(req, registerRequestType);
  if (isResult(d)) return d;
  const wr = writeRequest(ctx, req);
  try {
    authorizeVolumeWrite(ctx, req, wr);
    const vols = requestVolumes(d);
    const out: CSIVolume[] = [];
    for (let vol of vols) {
      if (vol.Namespace === '') vol.Namespace = wr.namespace;
      const invalid = validateVolume(vol);
      if (invalid) throw new RpcError(invalid);
      const existing = ctx.state.getVolume(vol.Namespace, vol.ID);
      const view = pluginValidate(ctx, vol);
      if (existing) {
        const cp = ctx.state.denormalizePlugins(copyVolume(existing));
        const err = reconcileVolume(ctx, view, cp, vol);
        if (err) throw new RpcError(`unable to update volume: ${err}`);
        vol = cp;
      } else if ((vol.Topologies?.length ?? 0) === 0 && vol.RequestedTopologies) {
        vol.Topologies = vol.RequestedTopologies.Required;
      }
      controllerValidate(ctx, view, vol);
      out.push(vol);
    }
    const index = ctx.state.upsertVolumes(out);
    // The reply carries the request objects after validation, not re-read state.
    return { kind: 'json', value: envelope(out, index), meta: leaderMeta(index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// PUT /v1/volume/csi/:id/create

const GiB = 1024n * 1024n * 1024n;

/** `CSIVolume.Create`. */
export function createVolumes(ctx: SimContext, req: SimRequest): HandlerResult {
  const d = decodeBody(req, createRequestType);
  if (isResult(d)) return d;
  const wr = writeRequest(ctx, req);
  try {
    authorizeVolumeWrite(ctx, req, wr);
    const vols = requestVolumes(d);
    const validated: Array<{ vol: CSIVolume; view: PluginView; current: CSIVolume | undefined }> = [];
    for (const vol of vols) {
      if (vol.Namespace === '') vol.Namespace = wr.namespace;
      const invalid = validateVolume(vol);
      if (invalid) throw new RpcError(invalid);
      const view = pluginValidate(ctx, vol);
      if (!view.record.ControllerRequired) throw new RpcError('plugin has no controller');
      if (!ctx.state.pluginHasCapability(view, 'SupportsCreateDelete'))
        throw new RpcError('plugin does not support creating volumes');
      const stored = ctx.state.getVolume(vol.Namespace, vol.ID);
      validated.push({ vol, view, current: stored ? ctx.state.denormalizePlugins(stored) : undefined });
    }
    const errs: string[] = [];
    const regs: CSIVolume[] = [];
    for (const { vol, view, current } of validated) {
      if (current) {
        const cp = copyVolume(current);
        const err = reconcileVolume(ctx, view, cp, vol);
        if (err) errs.push(err);
        else regs.push(cp);
        continue;
      }
      const capacity =
        vol.RequestedCapacityMin > 0n
          ? vol.RequestedCapacityMin
          : vol.RequestedCapacityMax > 0n
            ? vol.RequestedCapacityMax
            : GiB;
      const created = ctx.state
        .provider(view.record.ID)
        .createVolume(capacity, { snapshotId: vol.SnapshotID, cloneId: vol.CloneID });
      vol.ExternalID = created.ExternalID;
      vol.Capacity = created.CapacityBytes;
      vol.Context = created.VolumeContext;
      const requested = vol.RequestedTopologies?.Required?.[0] ?? vol.RequestedTopologies?.Preferred?.[0] ?? null;
      vol.Topologies = requested
        ? [{ Segments: requested.Segments }]
        : view.record.topology
          ? [{ Segments: new Map(view.record.topology) }]
          : null;
      regs.push(vol);
    }
    let index = 0;
    if (regs.length > 0) {
      try {
        index = ctx.state.upsertVolumes(regs);
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        errs.push(e.message);
      }
    }
    if (errs.length > 0) throw new RpcError(multierror(errs));
    return { kind: 'json', value: envelope(regs, index), meta: leaderMeta(index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// DELETE /v1/volume/csi/:id

/** `CSIVolume.Deregister`. */
export function deregisterVolume(ctx: SimContext, req: SimRequest, id: string): HandlerResult {
  const raw = qget(req, 'force');
  let force = false;
  if (raw !== '') {
    try {
      force = parseBool(raw);
    } catch {
      return { kind: 'error', status: 400, text: 'invalid force value' };
    }
  }
  const wr = writeRequest(ctx, req);
  try {
    const acl = rpcAuth(ctx, req, wr.region);
    if (!acl.allowAny(wr.namespace, ['csi-write-volume'])) throw new RpcError(PERMISSION_DENIED);
    const index = ctx.state.deregisterVolumes(wr.namespace, [id], force);
    return { kind: 'empty', meta: leaderMeta(index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// DELETE /v1/volume/csi/:id/delete

/** `CSIVolume.Delete`: provider delete, then deregister. */
export function deleteVolume(ctx: SimContext, req: SimRequest, id: string): HandlerResult {
  const secrets = parseCSISecrets(req);
  const wr = writeRequest(ctx, req);
  try {
    authorizeVolumeWrite(ctx, req, wr);
    const stored = ctx.state.getVolume(wr.namespace, id);
    if (!stored) throw new RpcError(`volume not found: ${id}`);
    const vol = ctx.state.denormalizePlugins(stored);
    if (!vol.ControllerRequired)
      throw new RpcError(`plugin ${goQuote(vol.PluginID)} for volume ${goQuote(id)} not found`);
    const plugin = ctx.state.plugins.get(vol.PluginID);
    if (!plugin) throw new RpcError(`plugin not found: ${vol.PluginID}`);
    // Query secrets are merged over the stored ones for ControllerDeleteVolume; the simulated
    // provider accepts any secrets.
    ctx.state.provider(plugin.ID).deleteVolume(vol.ExternalID, mergeSecrets(vol.Secrets, secrets));
    const index = ctx.state.deregisterVolumes(wr.namespace, [id], false);
    return { kind: 'empty', meta: leaderMeta(index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

// ---------------------------------------------------------------------------------------------
// DELETE /v1/volume/csi/:id/detach?node=

/**
 * `CSIVolume.Unpublish` for `nomad volume detach`: checkpoints the GC claim
 * through node-detached and ready-to-free, unpublishing the past claims on that node; claims of
 * live allocations are left alone. The released past claims are then freed by the (simulated)
 * volume watcher on the next tick (or when it resumes, if paused): the answer comes first, as
 * Nomad's does, whose RPC returns once the GC claim is checkpointed ready-to-free.
 */
export function detachVolume(ctx: SimContext, req: SimRequest, id: string): HandlerResult {
  const node = qget(req, 'node');
  if (node === '') return { kind: 'error', status: 400, text: 'detach requires node ID' };
  const wr = writeRequest(ctx, req);
  try {
    const acl = rpcAuth(ctx, req, wr.region);
    if (!acl.allowAny(wr.namespace, ['csi-mount-volume']) || !acl.allowPluginRead())
      throw new RpcError(PERMISSION_DENIED);
    if (id === '') throw new RpcError('missing volume ID');
    const stored = ctx.state.getVolume(wr.namespace, id);
    if (!stored) throw new RpcError('no such volume');
    const checkpoint = (state: number): number =>
      ctx.state.claimVolumes([{ ns: wr.namespace, volumeId: id, claim: gcClaim(node, state) }]);
    let index = checkpoint(ClaimState.Taken);
    // Past claims on this node: terminal allocs (node-detached) and GC'd ones.
    const { volume } = ctx.state.denormalizeAllocs(
      ctx.state.denormalizePlugins(ctx.state.getVolume(wr.namespace, id)!),
    );
    const allocIds = [...volume.PastClaims!.values()].filter((c) => c.NodeID === node).map((c) => c.AllocationID);
    for (const [allocId, c] of [...volume.ReadClaims!, ...volume.WriteClaims!]) {
      const a = ctx.state.allocs.get(allocId);
      if (c.NodeID === node && (!a || allocTerminal(a)) && !allocIds.includes(allocId)) allocIds.push(allocId);
    }
    // nodeUnpublishVolume: a node plugin that cannot be reached fails the detach after the first
    // checkpoint (the claims stay); a release the volume watcher failed is retried and succeeds.
    for (const allocId of allocIds) {
      const c = volume.PastClaims!.get(allocId) ?? volume.ReadClaims!.get(allocId) ?? volume.WriteClaims!.get(allocId);
      const failure = c ? ctx.state.nodeUnpublishFailure(volume, c) : null;
      if (failure !== null) throw new RpcError(failure);
    }
    for (const allocId of allocIds) ctx.state.heldReleases.delete(allocId);
    index = checkpoint(ClaimState.NodeDetached);
    // controllerUnpublishVolume checkpoints on its own only when it really detaches: controller
    // plugin with ATTACH_DETACH and no other live allocation on the node using the volume.
    const view = ctx.state.pluginView(volume.PluginID);
    const liveOnNode = [...volume.ReadAllocs!.keys(), ...volume.WriteAllocs!.keys()].some((allocId) => {
      const a = ctx.state.allocs.get(allocId);
      return a !== undefined && a.NodeID === node && !allocTerminal(a);
    });
    if (
      volume.ControllerRequired &&
      view &&
      ctx.state.pluginHasCapability(view, 'SupportsAttachDetach') &&
      !liveOnNode
    ) {
      for (const allocId of allocIds) {
        const c =
          volume.PastClaims!.get(allocId) ?? volume.ReadClaims!.get(allocId) ?? volume.WriteClaims!.get(allocId);
        // No healthy controller: the RPC fails after the node-detached checkpoint.
        const failure = c ? ctx.state.controllerUnpublishFailure(volume, c) : null;
        if (failure !== null) throw new RpcError(failure);
        if (c) ctx.state.controllerUnpublish(volume, c);
      }
      index = checkpoint(ClaimState.ReadyToFree);
    }
    index = checkpoint(ClaimState.ReadyToFree);
    ctx.state.watcherFree(0, () => {
      for (const allocId of allocIds)
        ctx.state.freeAllocClaims(allocId, { ns: wr.namespace, volumeId: id, nodeId: node });
    });
    return { kind: 'empty', meta: leaderMeta(index) };
  } catch (e) {
    return rpcErrorResult(e);
  }
}

function mergeSecrets(stored: Map<string, string> | null, query: Map<string, string> | null): Map<string, string> {
  return new Map([...(stored ?? new Map<string, string>()), ...(query ?? new Map<string, string>())]);
}

function gcClaim(nodeId: string, state: number): CSIVolumeClaim {
  return {
    AllocationID: '',
    NodeID: nodeId,
    ExternalNodeID: '',
    Mode: ClaimMode.GC,
    AccessMode: '',
    AttachmentMode: '',
    State: state,
  };
}
