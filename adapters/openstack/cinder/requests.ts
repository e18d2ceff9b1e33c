/**
 * One function per Cinder wire operation (the attachments API: `attachment-requests.ts`; volume
 * action bodies: `action-requests.ts`). Each takes typed neutral input, builds the path
 * (`urls.ts`), query and body, names its endpoint for metrics and its minimum microversion, and
 * returns the wire shape (`results.ts` maps it). No file outside these writes a Cinder wire key.
 */
import type { CallOptions } from '../../contract/call-options';
import { stringMap } from '../../contract/key-values';
import type { VolumePatch } from '../../contract/capabilities';
import { BadUserInputError } from '../../contract/errors';
import type { KeyValue } from '../../contract/model';
import type { OpenStackCall, OpenStackClient, OpenStackResult } from '../client';
import { FEATURES } from '../microversions';
import type { CinderMessage, CinderSnapshot, CinderVolume, Links } from './results';
import * as u from './urls';

/** A Cinder call: the client adds the service. */
export type Call = Omit<OpenStackCall, 'service'>;
/** One call to Cinder's endpoint (what every request function here and in `attachment-requests.ts` makes). */
export const cinder = <T>(c: OpenStackClient, call: Call, o: CallOptions): Promise<OpenStackResult<T>> =>
  c.call<T>({ service: 'volume', ...call }, o);
const short = (id: string): string => id.slice(0, 8);

/** A page request: Cinder pages by `limit` and `marker` (the last id seen). */
export interface ListQuery {
  limit: number;
  marker?: string;
  /** Exact-match filters Cinder applies (name, volume_id …), already in Cinder's words. */
  filters?: Record<string, string>;
  /** Every project's items (`all_tenants=1`): admins only; Cinder silently ignores it for others. @default false */
  allProjects?: boolean;
}

/** A page request's query, sorted oldest first so `marker` pages are stable. */
export function listQuery(q: ListQuery): URLSearchParams {
  const query = new URLSearchParams({ limit: String(q.limit), sort: 'created_at:asc,id:asc' });
  if (q.marker) query.set('marker', q.marker);
  if (q.allProjects) query.set('all_tenants', '1');
  for (const [k, v] of Object.entries(q.filters ?? {})) query.set(k, v);
  return query;
}

// ---- volumes --------------------------------------------------------------------------------

/** Filters of a volume listing, in the gateway's words. */
export const volumeFilters = (f: { name?: string }): Record<string, string> | undefined =>
  f.name === undefined ? undefined : { name: f.name };

export function listVolumesDetail(
  c: OpenStackClient,
  q: ListQuery,
  o: CallOptions,
): Promise<OpenStackResult<{ volumes: CinderVolume[]; volumes_links?: Links[] }>> {
  return cinder(
    c,
    {
      method: 'GET',
      path: u.volumesDetailURL(),
      endpoint: 'GET /volumes/detail',
      query: listQuery(q),
      action: 'listing volumes',
    },
    o,
  );
}

export function showVolume(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(
    c,
    { method: 'GET', path: u.volumeURL(id), endpoint: 'GET /volumes/:id', action: `reading volume ${id}` },
    o,
  );
}

/** A volume to create, in the gateway's words (ids already checked). */
export interface CreateVolumeInput {
  name: string;
  sizeGiB?: number;
  description?: string;
  volumeType?: string;
  availabilityZone?: string;
  metadata?: KeyValue[];
  snapshotId?: string;
  sourceVolumeId?: string;
}

/** Only set keys are sent: Cinder ≥ 3.53 rejects unknown ones and some reject nulls. */
export function createVolumeBody(v: CreateVolumeInput): Record<string, unknown> {
  const body: Record<string, unknown> = { name: v.name };
  if (v.sizeGiB !== undefined) body.size = v.sizeGiB;
  if (v.description !== undefined) body.description = v.description;
  if (v.volumeType !== undefined) body.volume_type = v.volumeType;
  if (v.availabilityZone !== undefined) body.availability_zone = v.availabilityZone;
  if (v.metadata?.length) body.metadata = stringMap(v.metadata);
  if (v.snapshotId !== undefined) body.snapshot_id = v.snapshotId;
  if (v.sourceVolumeId !== undefined) body.source_volid = v.sourceVolumeId;
  return { volume: body };
}

export function createVolume(
  c: OpenStackClient,
  v: CreateVolumeInput,
  o: CallOptions,
): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(
    c,
    {
      method: 'POST',
      path: u.volumesURL(),
      endpoint: 'POST /volumes',
      body: createVolumeBody(v),
      action: `creating volume "${v.name}"`,
    },
    o,
  );
}

export function updateVolumeBody(patch: VolumePatch): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (patch.name !== undefined) body.name = patch.name;
  if (patch.description !== undefined) body.description = patch.description;
  if (patch.metadata !== undefined) body.metadata = stringMap(patch.metadata);
  if (Object.keys(body).length === 0)
    throw BadUserInputError.atField('', () => 'nothing to change: give name, description or metadata');
  return { volume: body };
}

export function updateVolume(
  c: OpenStackClient,
  id: string,
  patch: VolumePatch,
  o: CallOptions,
): Promise<OpenStackResult<{ volume: CinderVolume }>> {
  return cinder(
    c,
    {
      method: 'PUT',
      path: u.volumeURL(id),
      endpoint: 'PUT /volumes/:id',
      body: updateVolumeBody(patch),
      action: `updating volume ${id}`,
    },
    o,
  );
}

export function deleteVolume(
  c: OpenStackClient,
  id: string,
  opts: { cascade?: boolean; force?: boolean },
  o: CallOptions,
): Promise<OpenStackResult<void>> {
  const query = new URLSearchParams();
  if (opts.cascade) query.set('cascade', 'true');
  if (opts.force) query.set('force', 'true');
  const need = opts.force ? { needs: FEATURES.volume.deleteForce, feature: 'a forced delete' } : {};
  return cinder(
    c,
    {
      method: 'DELETE',
      path: u.volumeURL(id),
      endpoint: 'DELETE /volumes/:id',
      query,
      action: `deleting volume ${id}`,
      ...need,
    },
    o,
  );
}

/** `POST /volumes/{id}/action` with exactly one action key (`action-requests.ts` builds bodies). */
export function volumeAction<T = unknown>(
  c: OpenStackClient,
  id: string,
  wire: string,
  body: unknown,
  o: CallOptions,
  need?: { version: string; feature: string },
): Promise<OpenStackResult<T>> {
  const call: Call = {
    method: 'POST',
    path: u.volumeActionURL(id),
    endpoint: `POST /volumes/:id/action ${wire}`,
    body: { [wire]: body },
    action: `${wire} on volume ${short(id)}`,
  };
  return cinder<T>(c, need ? { ...call, needs: need.version, feature: need.feature } : call, o);
}

/** Grows a volume (`os-extend`); an in-use volume needs 3.42. */
export function extendVolume(
  c: OpenStackClient,
  id: string,
  newSizeGiB: number,
  inUse: boolean,
  o: CallOptions,
): Promise<OpenStackResult<void>> {
  return volumeAction<void>(
    c,
    id,
    'os-extend',
    { new_size: newSizeGiB },
    o,
    inUse ? { version: FEATURES.volume.extendInUse, feature: 'extending an attached (in-use) volume' } : undefined,
  );
}

/** The Glance metadata Cinder holds for a volume (`os-show_image_metadata`). */
export function showImageMetadata(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ metadata: Record<string, string> }>> {
  return volumeAction(c, id, 'os-show_image_metadata', {}, o);
}

// ---- snapshots ------------------------------------------------------------------------------

/** Filters of a snapshot listing, in the gateway's words. */
export const snapshotFilters = (f: { volumeId?: string }): Record<string, string> | undefined =>
  f.volumeId === undefined ? undefined : { volume_id: f.volumeId };

export function listSnapshotsDetail(
  c: OpenStackClient,
  q: ListQuery,
  o: CallOptions,
): Promise<OpenStackResult<{ snapshots: CinderSnapshot[]; snapshots_links?: Links[] }>> {
  return cinder(
    c,
    {
      method: 'GET',
      path: u.snapshotsDetailURL(),
      endpoint: 'GET /snapshots/detail',
      query: listQuery(q),
      action: 'listing snapshots',
    },
    o,
  );
}

export function showSnapshot(
  c: OpenStackClient,
  id: string,
  o: CallOptions,
): Promise<OpenStackResult<{ snapshot: CinderSnapshot }>> {
  return cinder(
    c,
    { method: 'GET', path: u.snapshotURL(id), endpoint: 'GET /snapshots/:id', action: `reading snapshot ${id}` },
    o,
  );
}

/** A snapshot to take, in the gateway's words. */
export interface CreateSnapshotInput {
  volumeId: string;
  name: string;
  description?: string;
  /** Snapshot an in-use volume. */
  force?: boolean;
}

export function createSnapshotBody(s: CreateSnapshotInput): Record<string, unknown> {
  const body: Record<string, unknown> = { volume_id: s.volumeId, name: s.name };
  if (s.description !== undefined) body.description = s.description;
  if (s.force) body.force = true;
  return { snapshot: body };
}

export function createSnapshot(
  c: OpenStackClient,
  s: CreateSnapshotInput,
  o: CallOptions,
): Promise<OpenStackResult<{ snapshot: CinderSnapshot }>> {
  return cinder(
    c,
    {
      method: 'POST',
      path: u.snapshotsURL(),
      endpoint: 'POST /snapshots',
      body: createSnapshotBody(s),
      action: `snapshotting volume ${s.volumeId}`,
    },
    o,
  );
}

export function deleteSnapshot(c: OpenStackClient, id: string, o: CallOptions): Promise<OpenStackResult<void>> {
  return cinder(
    c,
    { method: 'DELETE', path: u.snapshotURL(id), endpoint: 'DELETE /snapshots/:id', action: `deleting snapshot ${id}` },
    o,
  );
}

// ---- user messages (≥ 3.3) ------------------------------------------------------------------

/**
 * User messages, newest first: those Cinder wrote while serving one of its requests (`requestId`,
 * exact for changes Cinder runs itself), or about one resource.
 */
export function listMessages(
  c: OpenStackClient,
  about: { requestId: string } | { resourceId: string },
  o: CallOptions,
): Promise<OpenStackResult<{ messages: CinderMessage[] }>> {
  const query = new URLSearchParams({ sort: 'created_at:desc', limit: '5' });
  if ('requestId' in about) query.set('request_id', about.requestId);
  else query.set('resource_uuid', about.resourceId);
  const what = 'requestId' in about ? `request ${about.requestId}` : about.resourceId;
  return cinder(
    c,
    {
      method: 'GET',
      path: u.messagesURL(),
      endpoint: 'GET /messages',
      query,
      action: `reading messages of ${what}`,
      needs: FEATURES.volume.messages,
      feature: 'user messages',
    },
    o,
  );
}
