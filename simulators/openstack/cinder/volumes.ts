/**
 * /v3/{p}/volumes: list (summary and detail), show, create, update, delete, summary (≥ 3.12)
 * and the volume metadata sub-resource, as recorded in cinder-21/01, 08, 09, 10 and keystone-22.
 */
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import type { Volume } from '../model';
import { pyBool, pyStr } from '../pyjson';
import { asObject, ok, type CinderCtx, type CinderResult } from './context';
import { listBody, listItems, type ListSpec } from './list-query';
import { getSnapshot, getVolume, inCallerProject, visibleVolumes } from './lookup';
import { authorize } from './policy';
import { metadataValue, noExtraKeys, requireElement, schemaError, sizeValue, stringOrNull } from './validation';
import { reserveVolume } from './quota';
import { deleteVolume, insertVolume, scheduleCreate } from './volume-ops';
import { volumeSummaryView, volumeView } from './views';

const GENERIC_400 = 'The server could not comply with the request since it is either malformed or otherwise incorrect.';

export const VOLUME_LIST: ListSpec<Volume> = {
  allowed: [
    'name',
    'status',
    'metadata',
    'bootable',
    'migration_status',
    'availability_zone',
    'group_id',
    'size',
    'created_at',
    'updated_at',
    'glance_metadata',
    'consumes_quota',
  ],
  fields: {
    id: (v) => v.id,
    name: (v) => v.name,
    display_name: (v) => v.name,
    description: (v) => v.description,
    status: (v) => v.status,
    size: (v) => v.size,
    bootable: (v) => v.bootable,
    availability_zone: (v) => v.availabilityZone,
    migration_status: (v) => v.migrationStatus,
    group_id: (v) => v.groupId,
    created_at: (v) => v.createdAt,
    updated_at: (v) => v.updatedAt,
    consumes_quota: (v) => v.consumesQuota,
    project_id: (v) => v.projectId,
    user_id: (v) => v.userId,
    volume_type_id: (v) => v.volumeTypeId,
    host: (v) => v.host,
  },
  dictFields: { metadata: (v) => v.metadata, glance_metadata: (v) => v.imageMetadata },
  countable: true,
  markerNotFound: (m) => `Volume ${m} could not be found.`,
};

export function listVolumes(ctx: CinderCtx, detail: boolean): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:get_all', 'reader');
  const r = listItems(ctx, visibleVolumes(ctx), VOLUME_LIST, inCallerProject(ctx));
  return ok(
    200,
    listBody(ctx, 'volumes', detail ? 'volumes/detail' : 'volumes', r, (v) =>
      detail ? volumeView(ctx.state, v, ctx, true) : volumeSummaryView(v, ctx),
    ),
  );
}

export function showVolume(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:get', 'reader');
  return ok(200, { volume: volumeView(ctx.state, getVolume(ctx, ctx.params.id!), ctx, true) });
}

const CREATE_KEYS = [
  'name',
  'description',
  'display_name',
  'display_description',
  'size',
  'volume_type',
  'availability_zone',
  'metadata',
  'snapshot_id',
  'source_volid',
  'imageRef',
  'image_id',
  'backup_id',
  'consistencygroup_id',
  'group_id',
  'multiattach',
];

export function createVolume(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:create', 'member');
  const state = ctx.state;
  const body = requireElement(ctx.body, 'volume');
  if (atLeast(ctx.mv, '3.53')) noExtraKeys('volume', body, CREATE_KEYS);
  const name = stringOrNull('name', body.name ?? body.display_name);
  const description = stringOrNull('description', body.description ?? body.display_description);
  const metadata =
    body.metadata === undefined || body.metadata === null ? {} : metadataValue('metadata', body.metadata);
  if (body.multiattach !== undefined && pyBool(body.multiattach) === true) {
    throw new ApiError(
      400,
      'Invalid input received: multiattach parameter has been removed. The default behavior is to use multiattach enabled volume types. Contact your administrator to create a multiattach enabled volume type and use it to create multiattach volumes.',
    );
  }
  let size = body.size === undefined || body.size === null ? undefined : sizeValue('size', body.size);
  let typeId: string | undefined;
  let bootable = false;
  let imageMetadata: Record<string, string> | null = null;
  const snapshotId = typeof body.snapshot_id === 'string' ? body.snapshot_id : null;
  const sourceVolid = typeof body.source_volid === 'string' ? body.source_volid : null;
  if (snapshotId) {
    const snap = getSnapshot(ctx, snapshotId);
    if (snap.status !== 'available')
      throw new ApiError(
        400,
        `Invalid snapshot: Originating snapshot status must be 'available' to create a volume, but is '${snap.status}'.`,
      );
    size ??= snap.size;
    if (size < snap.size)
      throw new ApiError(
        400,
        `Invalid input received: Volume size '${size}'GB cannot be smaller than the snapshot size ${snap.size}GB. They must be >= original snapshot size.`,
      );
    const src = state.volumes.get(snap.volumeId);
    typeId = src?.volumeTypeId;
    bootable = src?.bootable ?? false;
    imageMetadata = src?.imageMetadata ?? null;
  } else if (sourceVolid) {
    const src = getVolume(ctx, sourceVolid);
    if (!['available', 'in-use'].includes(src.status)) {
      throw new ApiError(
        400,
        `Invalid volume: Unable to create a volume from an originating source volume when its status is not 'available' or 'in-use'. The source volume status is ${src.status}.`,
      );
    }
    size ??= src.size;
    if (size < src.size)
      throw new ApiError(
        400,
        `Invalid input received: Volume size '${size}'GB cannot be smaller than original volume size ${src.size}GB. They must be >= original volume size.`,
      );
    typeId = src.volumeTypeId;
    bootable = src.bootable;
    imageMetadata = src.imageMetadata;
  }
  if (size === undefined) throw new ApiError(400, GENERIC_400);
  if (body.volume_type !== undefined && body.volume_type !== null) {
    const ref = pyStr(body.volume_type);
    const t = state.findType(ref);
    if (!t)
      throw new ApiError(
        404,
        /^[0-9a-f-]{32,36}$/i.test(ref)
          ? `Volume type ${ref} could not be found.`
          : `Volume type with name ${ref} could not be found.`,
      );
    typeId = t.id;
  }
  const az =
    body.availability_zone === undefined || body.availability_zone === null ? undefined : pyStr(body.availability_zone);
  if (az !== undefined && !state.opts.availabilityZones.includes(az))
    throw new ApiError(400, `Availability zone '${az}' is invalid.`);
  const image = body.imageRef ?? body.image_id;
  if (typeof image === 'string' && image !== '') {
    bootable = true;
    imageMetadata = { image_id: image };
  }
  reserveVolume(state, ctx.auth.projectId ?? '', size);
  const v = insertVolume(state, {
    projectId: ctx.auth.projectId ?? '',
    userId: ctx.auth.userId,
    size,
    name,
    description,
    metadata,
    snapshotId,
    sourceVolid,
    bootable,
    imageMetadata,
    status: 'creating',
    ...(typeId !== undefined ? { volumeTypeId: typeId } : {}),
    ...(az !== undefined ? { availabilityZone: az } : {}),
  });
  scheduleCreate(state, v, ctx.req.requestId);
  return ok(202, { volume: volumeView(state, v, ctx, false) });
}

const UPDATE_KEYS = ['name', 'description', 'display_name', 'display_description', 'metadata'];

export function updateVolume(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:update', 'member');
  const body = requireElement(ctx.body, 'volume');
  if (atLeast(ctx.mv, '3.53')) {
    if (Object.keys(body).length === 0) throw schemaError('volume', body, '{} does not have enough properties');
    noExtraKeys('volume', body, UPDATE_KEYS);
  }
  const v = getVolume(ctx, ctx.params.id!);
  if (v.status === 'maintenance')
    throw new ApiError(400, 'Invalid volume: The volume cannot be updated during maintenance.');
  if ('name' in body || 'display_name' in body) v.name = stringOrNull('name', body.name ?? body.display_name);
  if ('description' in body || 'display_description' in body)
    v.description = stringOrNull('description', body.description ?? body.display_description);
  if (body.metadata !== undefined && body.metadata !== null) v.metadata = metadataValue('metadata', body.metadata);
  // The response is rendered from the object loaded before the save: updated_at is the old one
  // (cinder-21/01 "PUT /volumes/{id} (rename)").
  const view = volumeView(ctx.state, v, ctx, false);
  ctx.state.touch(v);
  return ok(200, { volume: view });
}

export function deleteVolumeRoute(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:delete', 'member');
  const v = getVolume(ctx, ctx.params.id!);
  const q = (k: string): boolean => pyBool(ctx.req.query.find(([key]) => key === k)?.[1] ?? 'false') ?? false;
  const force = atLeast(ctx.mv, '3.23') && q('force');
  if (force) authorize(ctx.state, ctx.auth, 'volume:force_delete', 'admin');
  deleteVolume(ctx.state, v, { cascade: q('cascade'), force });
  return { status: 202, emptyAs: 'html' };
}

export function volumeSummary(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:get_all', 'reader');
  const all = ctx.auth.isAdmin && ctx.req.query.some(([k, v]) => k === 'all_tenants' && (pyBool(v) ?? true));
  const vols = visibleVolumes(ctx).filter((v) => all || v.projectId === ctx.auth.projectId);
  const summary: Record<string, unknown> = {
    total_size: vols.reduce((n, v) => n + v.size, 0),
    total_count: vols.length,
  };
  if (atLeast(ctx.mv, '3.36')) {
    const meta: Record<string, string[]> = {};
    for (const v of vols)
      for (const [k, val] of Object.entries(v.metadata)) if (!(meta[k] ??= []).includes(val)) meta[k].push(val);
    summary.metadata = meta;
  }
  return ok(200, { 'volume-summary': summary });
}

function metadataTarget(ctx: CinderCtx, write: boolean): Volume {
  authorize(
    ctx.state,
    ctx.auth,
    write ? 'volume:update_volume_metadata' : 'volume:get_volume_metadata',
    write ? 'member' : 'reader',
  );
  const v = getVolume(ctx, ctx.params.id!);
  if (write && v.status === 'maintenance')
    throw new ApiError(
      400,
      'Invalid volume: The volume metadata cannot be updated when the volume is in maintenance mode.',
    );
  return v;
}

/** GET/POST/PUT /volumes/{id}/metadata. */
export function volumeMetadata(ctx: CinderCtx, method: 'GET' | 'POST' | 'PUT'): CinderResult {
  const v = metadataTarget(ctx, method !== 'GET');
  if (method === 'GET') return ok(200, { metadata: { ...v.metadata } });
  const md = metadataValue('metadata', asObject(ctx.body)?.metadata ?? requireElement(ctx.body, 'metadata'));
  if (method === 'PUT') {
    v.metadata = md;
    ctx.state.touch(v);
    return ok(200, { metadata: { ...md } });
  }
  Object.assign(v.metadata, md);
  ctx.state.touch(v);
  const out: Record<string, string> = { ...md };
  for (const [k, val] of Object.entries(v.metadata)) if (!(k in out)) out[k] = val;
  return ok(200, { metadata: out });
}

/** GET/PUT/DELETE /volumes/{id}/metadata/{key}. */
export function volumeMetadataItem(ctx: CinderCtx, method: 'GET' | 'PUT' | 'DELETE'): CinderResult {
  const v = metadataTarget(ctx, method !== 'GET');
  const key = ctx.params.key!;
  const missing = (): ApiError => new ApiError(404, `Volume ${v.id} has no metadata with key ${key}.`);
  if (method === 'GET') {
    if (!(key in v.metadata)) throw missing();
    return ok(200, { meta: { [key]: v.metadata[key] } });
  }
  if (method === 'DELETE') {
    if (!(key in v.metadata)) throw missing();
    delete v.metadata[key];
    ctx.state.touch(v);
    return ok(200);
  }
  const meta = requireElement(ctx.body, 'meta');
  if (!(key in meta)) throw new ApiError(400, 'Request body and URI mismatch');
  if (Object.keys(meta).length > 1) throw new ApiError(400, 'Request body contains too many items');
  const md = metadataValue('meta', meta);
  Object.assign(v.metadata, md);
  ctx.state.touch(v);
  return ok(200, { meta: md });
}
