/**
 * One function per Nomad wire operation, named with Nomad's own verbs (api/csi.go). Each states
 * its path (via `urls.ts`), its query and body, and returns wire data plus query meta. Nomad
 * answers 200 for every success (backends.md 1.1), so there is no per-call status list.
 */
import type { CallOptions, SnapshotSpec, VolumeSpec } from '../../contract/backend';
import { stringMap } from '../../contract/key-values';
import { BadUserInputError, GatewayError, NotFoundError, UnauthenticatedError } from '../../contract/errors';
import { byteCount, headerText } from '../../contract/input';
import type { KeyValue, Topology } from '../../contract/model';
import type { NomadCall, NomadClient, NomadResult } from '../client';
import { NOMAD_ACCESS_MODE, NOMAD_ATTACHMENT_MODE } from '../wire/scalars';
import type {
  WireExternalList,
  WirePlugin,
  WirePluginStub,
  WireSnapshotCreateReply,
  WireSnapshotList,
  WireVolume,
  WireVolumeStub,
  WireVolumeWriteReply,
} from '../wire/types';
import * as urls from './urls';

/** Options of {@link listVolumes}. Precedence on the server: node > plugin > prefix (backends.md 1.4.1). */
export interface ListVolumesOpts {
  /** Namespace, or `*` for every namespace the token may list. */
  namespace: string;
  /** Exact plugin id. Nomad returns `[]` when combined with `namespace=*` (use a filter instead). */
  pluginId?: string;
  /** Exact Nomad node id: volumes used by allocations placed on the node. Unordered on the wire. */
  nodeId?: string;
  /** go-bexpr expression over the stored volume, built by `filter.ts`. */
  filter?: string;
  /** Page size; 0 or absent = all. */
  perPage?: number;
  /** `<namespace>.<id>` of the first item wanted. */
  nextToken?: string;
}

export function listVolumes(c: NomadClient, opts: ListVolumesOpts, o: CallOptions): Promise<NomadResult<WireVolumeStub[]>> {
  const q = new URLSearchParams({ type: 'csi', namespace: opts.namespace });
  if (opts.nodeId) q.set('node_id', opts.nodeId);
  if (opts.pluginId) q.set('plugin_id', opts.pluginId);
  if (opts.filter) q.set('filter', opts.filter);
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call({ method: 'GET', path: urls.listVolumesURL(), endpoint: 'GET /v1/volumes', query: q, action: 'listing volumes' }, o);
}

/** Full read. Answers 404 `volume not found` for unknown ids (the only 404 besides plugins). */
export function readVolume(c: NomadClient, id: string, namespace: string, o: CallOptions): Promise<NomadResult<WireVolume>> {
  return c.call(
    {
      method: 'GET',
      path: urls.readVolumeURL(id),
      endpoint: 'GET /v1/volume/csi/:id',
      query: new URLSearchParams({ namespace }),
      action: `reading volume "${id}"`,
    },
    o,
  );
}

/** Request body of register and create: a CSIVolume in Go field names (backends.md 1.4.3). */
export interface VolumeRequest {
  ID: string;
  Name: string;
  Namespace: string;
  PluginID: string;
  ExternalID?: string;
  RequestedCapacityMin?: number;
  RequestedCapacityMax?: number;
  RequestedCapabilities: Array<{ AccessMode: string; AttachmentMode: string }>;
  MountOptions?: { FSType: string; MountFlags: string[] };
  Secrets?: Record<string, string>;
  Parameters?: Record<string, string>;
  Context?: Record<string, string>;
  RequestedTopologies?: { Required: Array<{ Segments: Record<string, string> }> | null; Preferred: Array<{ Segments: Record<string, string> }> | null };
  SnapshotID?: string;
  CloneID?: string;
}

/** Pairs → a Go string map; none → left out. */
const record = (kvs: readonly KeyValue[] | undefined): Record<string, string> | undefined => (kvs && kvs.length > 0 ? stringMap(kvs) : undefined);
const segments = (ts: Topology[] | undefined): Array<{ Segments: Record<string, string> }> | null =>
  ts && ts.length > 0 ? ts.map((t) => ({ Segments: record(t.segments) ?? {} })) : null;

const bytes = (v: number | undefined, argument: string): number | undefined => (v === undefined ? undefined : byteCount(v, argument));

/**
 * The register/create body for `spec` (backends.md 1.4.3–1.4.4), after the checks Nomad would
 * otherwise answer with a 500 or silently ignore: the caller chooses the id, the Nomad part is
 * required, OpenStack-only and Nomad-less fields are refused, and only register takes the
 * provider's volume id (create gets one from the plugin).
 */
export function volumeRequest(spec: VolumeSpec, how: 'register' | 'create'): VolumeRequest {
  const n = spec.nomad;
  if (!spec.nativeId) throw new BadUserInputError('Nomad volumes need an id chosen by the caller (input.nomad.nativeId)', 'input.nomad.nativeId');
  if (!n) throw new BadUserInputError('Nomad volumes need their Nomad part (input.nomad)', 'input.nomad');
  if (spec.cinder) throw new BadUserInputError('input.cinder is for OpenStack backends; Nomad takes input.nomad', 'input.cinder');
  if (spec.description !== undefined || (spec.metadata?.length ?? 0) > 0) {
    throw new BadUserInputError('Nomad volumes have no description or metadata; use input.nomad.parameters or input.nomad.context', spec.description !== undefined ? 'input.description' : 'input.metadata');
  }
  if (!n.pluginId) throw new BadUserInputError('Nomad volumes need a plugin (input.nomad.plugin)', 'input.nomad.plugin');
  if (n.capabilities.length === 0) throw new BadUserInputError('Nomad volumes need at least one access/attachment mode (input.nomad.capabilities)', 'input.nomad.capabilities');
  if (how === 'register' && !n.externalId) throw new BadUserInputError('registering needs the provider volume id (input.nomad.externalId)', 'input.nomad.externalId');
  if (how === 'create' && n.externalId !== undefined) throw new BadUserInputError('the plugin chooses the provider volume id on create; input.nomad.externalId is for registering', 'input.nomad.externalId');
  const min = bytes(spec.capacityMinBytes, 'input.sizeBytes');
  const max = bytes(spec.capacityMaxBytes, 'input.maxSizeBytes');
  if (min !== undefined && max !== undefined && max > 0 && max < min) throw new BadUserInputError('input.maxSizeBytes is below input.sizeBytes', 'input.maxSizeBytes');
  return {
    ID: spec.nativeId,
    Name: spec.name,
    Namespace: spec.namespace,
    PluginID: n.pluginId,
    ExternalID: n.externalId,
    RequestedCapacityMin: min,
    RequestedCapacityMax: max,
    RequestedCapabilities: n.capabilities.map((c) => ({ AccessMode: NOMAD_ACCESS_MODE[c.accessMode], AttachmentMode: NOMAD_ATTACHMENT_MODE[c.attachmentMode] })),
    MountOptions: n.mountOptions ? { FSType: n.mountOptions.fsType ?? '', MountFlags: n.mountOptions.mountFlags ?? [] } : undefined,
    // Stored with the volume and later merged with header secrets: one rule for both.
    Secrets: record(checkCsiSecrets(n.secrets, 'input.nomad.secrets')),
    Parameters: record(n.parameters),
    Context: record(n.context),
    RequestedTopologies:
      n.requiredTopologies || n.preferredTopologies ? { Required: segments(n.requiredTopologies), Preferred: segments(n.preferredTopologies) } : undefined,
    SnapshotID: n.snapshotId,
    CloneID: n.cloneId,
  };
}

function writeVolume(c: NomadClient, v: VolumeRequest, how: 'register' | 'create', o: CallOptions): Promise<NomadResult<WireVolumeWriteReply>> {
  const create = how === 'create';
  return c.call(
    {
      method: 'PUT',
      path: create ? urls.createVolumeURL(v.ID) : urls.registerVolumeURL(v.ID),
      endpoint: create ? 'PUT /v1/volume/csi/:id/create' : 'PUT /v1/volume/csi/:id',
      query: new URLSearchParams({ namespace: v.Namespace }),
      body: { Volumes: [v] },
      action: `${create ? 'creating' : 'registering'} volume "${v.ID}"`,
    },
    o,
  );
}

/** Registers an existing provider volume. The path id is ignored by Nomad; the body carries it. */
export const register = (c: NomadClient, v: VolumeRequest, o: CallOptions): Promise<NomadResult<WireVolumeWriteReply>> => writeVolume(c, v, 'register', o);

/** Creates the volume in the storage provider (synchronously) and registers it. Same body as register. */
export const create = (c: NomadClient, v: VolumeRequest, o: CallOptions): Promise<NomadResult<WireVolumeWriteReply>> => writeVolume(c, v, 'create', o);

/** Removes the volume from Nomad only; the provider volume stays. Empty 200 body. */
export function deregister(c: NomadClient, id: string, namespace: string, force: boolean, o: CallOptions): Promise<NomadResult<void>> {
  const q = new URLSearchParams({ namespace });
  if (force) q.set('force', 'true');
  return c.call({ method: 'DELETE', path: urls.deregisterVolumeURL(id), endpoint: 'DELETE /v1/volume/csi/:id', query: q, action: `deregistering volume "${id}"` }, o);
}

/**
 * Checks CSI secrets for `X-Nomad-CSI-Secrets: k1=v1,k2=v2` (backends.md 1.4.6). Nomad splits the
 * header on `,`, then each pair on its first `=`, and silently drops pairs without one; a later
 * duplicate key wins. So an empty key, a key with `,` or `=`, a value with `,` or a repeated key
 * would smuggle in another secret or lose one: refused, naming e.g. `input.secrets[0].key`,
 * never echoing the secret. Keys and values must also be header text (printable Latin-1).
 */
export function checkCsiSecrets(secrets: readonly KeyValue[] | undefined, argument: string): KeyValue[] {
  const seen = new Set<string>();
  return (secrets ?? []).map((s, i) => {
    const key = headerText(s.key, `${argument}[${i}].key`);
    const value = headerText(s.value, `${argument}[${i}].value`);
    if (key === '' || /[=,]/.test(key)) throw new BadUserInputError(`${argument}[${i}].key must be non-empty and hold no "=" or ",": Nomad splits X-Nomad-CSI-Secrets on them`, `${argument}[${i}].key`);
    if (value.includes(',')) throw new BadUserInputError(`${argument}[${i}].value must hold no ",": Nomad splits X-Nomad-CSI-Secrets on it`, `${argument}[${i}].value`);
    if (seen.has(key)) throw new BadUserInputError(`${argument}[${i}].key repeats an earlier key`, `${argument}[${i}].key`);
    seen.add(key);
    return { key, value };
  });
}

/** The `X-Nomad-CSI-Secrets` header; `secrets` passed {@link checkCsiSecrets}. */
export function secretsHeader(secrets: KeyValue[]): Record<string, string> {
  return secrets.length === 0 ? {} : { 'x-nomad-csi-secrets': secrets.map((s) => `${s.key}=${s.value}`).join(',') };
}

/** Deletes the provider volume, then deregisters it. Empty 200 body. */
export function deleteVolume(c: NomadClient, id: string, namespace: string, secrets: KeyValue[], o: CallOptions): Promise<NomadResult<void>> {
  return c.call(
    {
      method: 'DELETE',
      path: urls.deleteVolumeURL(id),
      endpoint: 'DELETE /v1/volume/csi/:id/delete',
      query: new URLSearchParams({ namespace }),
      headers: secretsHeader(secrets),
      action: `deleting volume "${id}"`,
    },
    o,
  );
}

/** Unpublishes the volume from a node for claims of stopped allocations. Empty 200 body. */
export function detach(c: NomadClient, id: string, namespace: string, nodeId: string, o: CallOptions): Promise<NomadResult<void>> {
  return c.call(
    {
      method: 'DELETE',
      path: urls.detachVolumeURL(id),
      endpoint: 'DELETE /v1/volume/csi/:id/detach',
      query: new URLSearchParams({ namespace, node: nodeId }),
      action: `detaching volume "${id}" from node "${nodeId}"`,
    },
    o,
  );
}

/** Volumes as the controller plugin sees them. The next token is in the body, not a header. */
export function listExternal(
  c: NomadClient,
  opts: { pluginId: string; namespace: string; perPage?: number; nextToken?: string },
  o: CallOptions,
): Promise<NomadResult<WireExternalList>> {
  const q = new URLSearchParams({ plugin_id: opts.pluginId, namespace: opts.namespace });
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call({ method: 'GET', path: urls.listExternalVolumesURL(), endpoint: 'GET /v1/volumes/external', query: q, action: `listing external volumes of plugin "${opts.pluginId}"` }, o);
}

export interface SnapshotRequest {
  SourceVolumeID: string;
  PluginID?: string;
  Name: string;
  Secrets?: Record<string, string>;
  Parameters?: Record<string, string>;
}

/**
 * The snapshot create body for `spec`. Nomad snapshots have no description, and `force` is
 * Cinder's (Nomad snapshots in-use volumes as the plugin allows): both refused, not dropped.
 */
export function snapshotRequest(spec: SnapshotSpec): SnapshotRequest {
  if (spec.description !== undefined) throw new BadUserInputError('Nomad snapshots have no description', 'input.description');
  if (spec.force) throw new BadUserInputError('force is an OpenStack option; Nomad snapshots in-use volumes as the plugin allows', 'input.force');
  return {
    SourceVolumeID: spec.volume.nativeId,
    PluginID: spec.pluginId,
    Name: spec.name,
    Secrets: record(checkCsiSecrets(spec.secrets, 'input.secrets')),
    Parameters: record(spec.parameters),
  };
}

/** Creates snapshots of volumes in `namespace`. Any failure is a 500, even if others were made. */
export function createSnapshot(c: NomadClient, s: SnapshotRequest, namespace: string, o: CallOptions): Promise<NomadResult<WireSnapshotCreateReply>> {
  return c.call(
    {
      method: 'POST',
      path: urls.snapshotsURL(),
      endpoint: 'POST /v1/volumes/snapshot',
      query: new URLSearchParams({ namespace }),
      body: { Snapshots: [s] },
      action: `creating a snapshot of volume "${s.SourceVolumeID}"`,
    },
    o,
  );
}

export function deleteSnapshot(c: NomadClient, pluginId: string, snapshotId: string, secrets: KeyValue[], o: CallOptions): Promise<NomadResult<void>> {
  return c.call(
    {
      method: 'DELETE',
      path: urls.snapshotsURL(),
      endpoint: 'DELETE /v1/volumes/snapshot',
      query: new URLSearchParams({ plugin_id: pluginId, snapshot_id: snapshotId }),
      headers: secretsHeader(secrets),
      action: `deleting snapshot "${snapshotId}"`,
    },
    o,
  );
}

export function listSnapshots(
  c: NomadClient,
  opts: { pluginId: string; perPage?: number; nextToken?: string; secrets: KeyValue[] },
  o: CallOptions,
): Promise<NomadResult<WireSnapshotList>> {
  const q = new URLSearchParams({ plugin_id: opts.pluginId });
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call(
    { method: 'GET', path: urls.snapshotsURL(), endpoint: 'GET /v1/volumes/snapshot', query: q, headers: secretsHeader(opts.secrets), action: `listing snapshots of plugin "${opts.pluginId}"` },
    o,
  );
}

/** CSI plugins, ordered by id; no pagination on the wire. */
export function listPlugins(c: NomadClient, o: CallOptions): Promise<NomadResult<WirePluginStub[]>> {
  return c.call({ method: 'GET', path: urls.listPluginsURL(), endpoint: 'GET /v1/plugins', query: new URLSearchParams({ type: 'csi' }), action: 'listing plugins' }, o);
}

export function readPlugin(c: NomadClient, id: string, o: CallOptions): Promise<NomadResult<WirePlugin>> {
  return c.call({ method: 'GET', path: urls.readPluginURL(id), endpoint: 'GET /v1/plugin/csi/:id', action: `reading plugin "${id}"` }, o);
}

/** Address of the Raft leader; needs no ACL, so it serves as the health probe. */
export function leader(c: NomadClient, o: CallOptions): Promise<NomadResult<string>> {
  return c.call({ method: 'GET', path: urls.leaderURL(), endpoint: 'GET /v1/status/leader', action: 'probing the leader' }, o);
}

// ---- the live path (watch.ts) --------------------------------------------------------------

/**
 * `GET /v1/event/stream?topic=…&namespace=*&index=N` (backends.md 1.7): ndjson, read by the
 * watcher's own connection (`watch-connection.ts`), never the pool.
 */
export function eventStreamCall(topics: readonly string[], index: number): NomadCall {
  const q = new URLSearchParams({ namespace: '*', index: String(index) });
  for (const t of topics) q.append('topic', t);
  return { method: 'GET', path: urls.eventStreamURL(), endpoint: 'GET /v1/event/stream', query: q, action: 'following the event stream' };
}

/**
 * The volume list in every namespace as a blocking query (backends.md 1.2): answers once the
 * table index passes `index`, or after `waitMs` (plus Nomad's jitter of up to 1/16) unchanged.
 */
export function blockingListCall(index: number, waitMs: number): NomadCall {
  const q = new URLSearchParams({ type: 'csi', namespace: '*', index: String(index), wait: `${Math.max(1, Math.round(waitMs))}ms` });
  return { method: 'GET', path: urls.listVolumesURL(), endpoint: 'GET /v1/volumes', query: q, action: 'watching the volume list' };
}

/**
 * Whether Nomad knows the credential's token (`GET /v1/acl/token/self`). The CSI endpoints answer
 * an unknown token with the same `403 Permission denied` as a lacking policy; this one answers
 * `ACL token not found` instead. ACLs disabled (400) means every token is as good as any.
 */
export async function tokenKnown(c: NomadClient, o: CallOptions): Promise<boolean> {
  try {
    await c.call({ method: 'GET', path: urls.aclTokenSelfURL(), endpoint: 'GET /v1/acl/token/self', action: 'checking the token' }, o);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof UnauthenticatedError) return false;
    if (err instanceof GatewayError && err.httpStatus === 400) return true;
    throw err;
  }
}
