/**
 * Nomad's volume calls, one function per wire operation, named with Nomad's own verbs
 * (api/csi.go). Each states its path (via `urls.ts`), its query and body, and returns wire data
 * plus query meta. Nomad answers 200 for every success (hashicorp/nomad command/agent/http.go), so there is no
 * per-call status list. The other folders' `requests.ts` follow the same rule.
 */
import type { CallOptions } from '../../contract/call-options';
import type { KeyValue, Topology } from '../../contract/model';
import type { NomadClient, NomadResult } from '../client';
import { secretsHeader } from '../wire/csi-secrets';
import { goStringMap, NOMAD_ACCESS_MODE, NOMAD_ATTACHMENT_MODE } from '../wire/scalars';
import type { WireVolume, WireVolumeStub, WireVolumeWriteReply } from '../wire/types';
import type { NomadVolume } from './input';
import * as urls from './urls';

/** Options of {@link listVolumeStubs}. Precedence on the server: node > plugin > prefix (hashicorp/nomad nomad/csi_endpoint.go `List`). */
export interface ListVolumeStubsOpts {
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

/** One `GET /v1/volumes?type=csi`: the list stubs (`CSIVolListStub`) of a page, and the query meta with its next token. */
export function listVolumeStubs(
  c: NomadClient,
  opts: ListVolumeStubsOpts,
  o: CallOptions,
): Promise<NomadResult<WireVolumeStub[]>> {
  const q = new URLSearchParams({ type: 'csi', namespace: opts.namespace });
  if (opts.nodeId) q.set('node_id', opts.nodeId);
  if (opts.pluginId) q.set('plugin_id', opts.pluginId);
  if (opts.filter) q.set('filter', opts.filter);
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call(
    { method: 'GET', path: urls.listVolumesURL(), endpoint: 'GET /v1/volumes', query: q, action: 'listing volumes' },
    o,
  );
}

/** Full read. Answers 404 `volume not found` for unknown ids (the only 404 besides plugins). */
export function readVolume(
  c: NomadClient,
  id: string,
  namespace: string,
  o: CallOptions,
): Promise<NomadResult<WireVolume>> {
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

/**
 * Request body of register and create: a CSIVolume in Go field names (hashicorp/nomad
 * nomad/structs/csi.go; Nomad's API docs, volumes, "Register CSI Volume").
 */
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
  RequestedTopologies?: {
    Required: Array<{ Segments: Record<string, string> }> | null;
    Preferred: Array<{ Segments: Record<string, string> }> | null;
  };
  SnapshotID?: string;
  CloneID?: string;
}

const segments = (ts: Topology[] | undefined): Array<{ Segments: Record<string, string> }> | null =>
  ts && ts.length > 0 ? ts.map((t) => ({ Segments: goStringMap(t.segments) ?? {} })) : null;

/** The register/create body for a checked volume (`input.ts`; hashicorp/nomad command/agent/csi_endpoint.go). */
export function volumeRequest(v: NomadVolume): VolumeRequest {
  return {
    ID: v.nativeId,
    Name: v.name,
    Namespace: v.namespace,
    PluginID: v.pluginId,
    ExternalID: v.externalId,
    RequestedCapacityMin: v.capacityMin,
    RequestedCapacityMax: v.capacityMax,
    RequestedCapabilities: v.capabilities.map((c) => ({
      AccessMode: NOMAD_ACCESS_MODE[c.accessMode],
      AttachmentMode: NOMAD_ATTACHMENT_MODE[c.attachmentMode],
    })),
    MountOptions: v.mountOptions
      ? { FSType: v.mountOptions.fsType ?? '', MountFlags: v.mountOptions.mountFlags }
      : undefined,
    Secrets: goStringMap(v.secrets),
    Parameters: goStringMap(v.parameters),
    Context: goStringMap(v.context),
    RequestedTopologies:
      v.requiredTopologies || v.preferredTopologies
        ? { Required: segments(v.requiredTopologies), Preferred: segments(v.preferredTopologies) }
        : undefined,
    SnapshotID: v.snapshotId,
    CloneID: v.cloneId,
  };
}

function writeVolume(
  c: NomadClient,
  v: VolumeRequest,
  how: 'register' | 'create',
  o: CallOptions,
): Promise<NomadResult<WireVolumeWriteReply>> {
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
export const register = (
  c: NomadClient,
  v: VolumeRequest,
  o: CallOptions,
): Promise<NomadResult<WireVolumeWriteReply>> => writeVolume(c, v, 'register', o);

/** Creates the volume in the storage provider (synchronously) and registers it. Same body as register. */
export const create = (c: NomadClient, v: VolumeRequest, o: CallOptions): Promise<NomadResult<WireVolumeWriteReply>> =>
  writeVolume(c, v, 'create', o);

/** Removes the volume from Nomad only; the provider volume stays. Empty 200 body. */
export function deregister(
  c: NomadClient,
  id: string,
  namespace: string,
  force: boolean,
  o: CallOptions,
): Promise<NomadResult<void>> {
  const q = new URLSearchParams({ namespace });
  if (force) q.set('force', 'true');
  return c.call(
    {
      method: 'DELETE',
      path: urls.deregisterVolumeURL(id),
      endpoint: 'DELETE /v1/volume/csi/:id',
      query: q,
      action: `deregistering volume "${id}"`,
    },
    o,
  );
}

/** Deletes the provider volume, then deregisters it. Empty 200 body. */
export function deleteVolume(
  c: NomadClient,
  id: string,
  namespace: string,
  secrets: KeyValue[],
  o: CallOptions,
): Promise<NomadResult<void>> {
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
export function detach(
  c: NomadClient,
  id: string,
  namespace: string,
  nodeId: string,
  o: CallOptions,
): Promise<NomadResult<void>> {
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
