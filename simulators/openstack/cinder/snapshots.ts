/**
 * /v3/{p}/snapshots (cinder-21/07, 08): list/detail/show/create/update/delete and the admin
 * actions. Create answers the detail view without the `os-extended-snapshot-attributes:*` keys;
 * `creating` → `available` after `snapshotMs`, delete `deleting` → gone after `snapshotDeleteMs`.
 */
import { nowMicros } from '../clock';
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import { uuid } from '../ids';
import type { Snapshot, Volume } from '../model';
import { pyRepr } from '../pyjson';
import type { SimState } from '../state';
import { asObject, ok, singleAction, type CinderCtx, type CinderResult } from './context';
import { listBody, listItems, type ListSpec } from './list-query';
import { canSee, getSnapshot, getVolume } from './lookup';
import { authorize } from './policy';
import { reserveSnapshot } from './quota';
import { boolValue, metadataValue, requireElement, requireProperty, schemaError, stringOrNull } from './validation';
import { snapshotView } from './views';

const SNAPSHOT_STATUSES = [
  'error',
  'available',
  'creating',
  'deleting',
  'deleted',
  'updating',
  'error_deleting',
  'unmanaging',
  'backing-up',
  'restoring',
];

const SNAPSHOT_LIST: ListSpec<Snapshot> = {
  allowed: ['name', 'status', 'volume_id', 'metadata', 'availability_zone', 'consumes_quota'],
  fields: {
    id: (s) => s.id,
    name: (s) => s.name,
    display_name: (s) => s.name,
    status: (s) => s.status,
    volume_id: (s) => s.volumeId,
    size: (s) => s.size,
    created_at: (s) => s.createdAt,
    updated_at: (s) => s.updatedAt,
    project_id: (s) => s.projectId,
    consumes_quota: (s) => s.consumesQuota,
  },
  dictFields: { metadata: (s) => s.metadata },
  countable: true,
  markerNotFound: (m) => `Snapshot ${m} could not be found.`,
};

/** Stores a snapshot; `creating` ones become `available` after snapshotMs. */
export function insertSnapshot(
  state: SimState,
  v: Volume,
  spec: {
    userId: string;
    name?: string | null;
    description?: string | null;
    metadata?: Record<string, string>;
    status?: string;
    id?: string;
  },
): Snapshot {
  const status = spec.status ?? 'available';
  const s: Snapshot = {
    id: spec.id ?? uuid(),
    projectId: v.projectId,
    userId: spec.userId,
    volumeId: v.id,
    name: spec.name ?? null,
    description: spec.description ?? null,
    status,
    size: v.size,
    metadata: { ...(spec.metadata ?? {}) },
    progress: status === 'creating' ? '0%' : '100%',
    groupSnapshotId: null,
    consumesQuota: true,
    createdAt: nowMicros(),
    updatedAt: status === 'creating' ? null : nowMicros(),
  };
  if (state.snapshots.has(s.id)) throw new Error(`snapshot ${s.id} already exists`);
  state.snapshots.set(s.id, s);
  if (status === 'creating') {
    state.timers.after(state.delays.snapshotMs, () => {
      if (state.snapshots.get(s.id) !== s || s.status !== 'creating') return;
      s.status = 'available';
      s.progress = '100%';
      state.touch(s);
    });
  }
  return s;
}

function deleteLater(state: SimState, s: Snapshot): void {
  s.status = 'deleting';
  state.touch(s);
  state.timers.after(state.delays.snapshotDeleteMs, () => {
    if (state.snapshots.get(s.id) === s) state.snapshots.delete(s.id);
  });
}

export function listSnapshots(ctx: CinderCtx, detail: boolean): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:get_all_snapshots', 'reader');
  const visible = [...ctx.state.snapshots.values()].filter((s) => canSee(ctx, s.projectId));
  const r = listItems(ctx, visible, SNAPSHOT_LIST, (s) => s.projectId === ctx.auth.projectId);
  return ok(
    200,
    listBody(ctx, 'snapshots', detail ? 'snapshots/detail' : 'snapshots', r, (s) =>
      snapshotView(s, ctx, detail, detail),
    ),
  );
}

export function showSnapshot(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:get_snapshot', 'reader');
  return ok(200, { snapshot: snapshotView(getSnapshot(ctx, ctx.params.id!), ctx, true, true) });
}

export function createSnapshot(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:create_snapshot', 'member');
  const body = requireElement(ctx.body, 'snapshot');
  const volumeId = requireProperty('snapshot', body, 'volume_id');
  if (typeof volumeId !== 'string') throw schemaError('volume_id', volumeId, `${pyRepr(volumeId)} is not a 'uuid'`);
  const name = stringOrNull('name', body.name ?? body.display_name);
  const description = stringOrNull('description', body.description ?? body.display_description);
  const metadata =
    body.metadata === undefined || body.metadata === null ? {} : metadataValue('metadata', body.metadata);
  let force = body.force === undefined ? false : boolValue('force', body.force);
  if (atLeast(ctx.mv, '3.66')) {
    if (body.force !== undefined && !force) {
      throw new ApiError(
        400,
        "Since microversion 3.66 the 'force' flag is invalid for this request.  For backward compatability, however, when the 'force' flag is passed with a value evaluating to True, it is silently ignored.",
      );
    }
    force = true;
  }
  const v = getVolume(ctx, volumeId);
  if (v.migrationStatus !== null && !['success', 'error', 'none'].includes(v.migrationStatus))
    throw new ApiError(400, 'Invalid volume: Snapshot cannot be created while volume is migrating.');
  if (!force && v.status !== 'available')
    throw new ApiError(
      400,
      `Invalid volume: Volume ${v.id} status must be available, but current status is: ${v.status}.`,
    );
  if (force && !['available', 'in-use'].includes(v.status))
    throw new ApiError(
      400,
      `Invalid volume: Volume ${v.id} status must be available or in-use, but current status is: ${v.status}.`,
    );
  reserveSnapshot(ctx.state, v.projectId, v.size);
  const s = insertSnapshot(ctx.state, v, { userId: ctx.auth.userId, name, description, metadata, status: 'creating' });
  return ok(202, { snapshot: snapshotView(s, ctx, true, false) });
}

export function updateSnapshot(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:update_snapshot', 'member');
  const body = requireElement(ctx.body, 'snapshot');
  const s = getSnapshot(ctx, ctx.params.id!);
  if ('name' in body || 'display_name' in body) s.name = stringOrNull('name', body.name ?? body.display_name);
  if ('description' in body || 'display_description' in body)
    s.description = stringOrNull('description', body.description ?? body.display_description);
  ctx.state.touch(s);
  return ok(200, { snapshot: snapshotView(s, ctx, true, false) });
}

export function deleteSnapshot(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume:delete_snapshot', 'member');
  const s = getSnapshot(ctx, ctx.params.id!);
  if (!['available', 'error'].includes(s.status) || s.groupSnapshotId !== null) {
    throw new ApiError(
      400,
      'Invalid snapshot: Snapshot status must be available or error and must not be part of a group.',
    );
  }
  deleteLater(ctx.state, s);
  return { status: 202, emptyAs: 'html' };
}

export function snapshotAction(ctx: CinderCtx): CinderResult {
  const known = ['os-reset_status', 'os-force_delete', 'os-update_snapshot_status', 'os-unmanage'];
  const { name, arg: raw } = singleAction(ctx.body, (n) => known.includes(n));
  const arg = asObject(raw) ?? {};
  const s = getSnapshot(ctx, ctx.params.id!);
  switch (name) {
    case 'os-reset_status': {
      authorize(ctx.state, ctx.auth, 'volume_extension:snapshot_admin_actions:reset_status', 'admin');
      const status = requireProperty('os-reset_status', arg, 'status');
      if (!SNAPSHOT_STATUSES.includes(String(status)))
        throw new ApiError(
          400,
          `Snapshot status: ${String(status)} is invalid, valid statuses are: (${SNAPSHOT_STATUSES.map(pyRepr).join(', ')}).`,
        );
      s.status = String(status);
      ctx.state.touch(s);
      return ok(202);
    }
    case 'os-force_delete':
      authorize(ctx.state, ctx.auth, 'volume_extension:snapshot_admin_actions:force_delete', 'admin');
      deleteLater(ctx.state, s);
      return ok(202);
    case 'os-unmanage':
      authorize(ctx.state, ctx.auth, 'snapshot_extension:snapshot_unmanage', 'admin');
      if (!['available', 'error'].includes(s.status))
        throw new ApiError(
          400,
          'Invalid snapshot: Snapshot status must be available or error and must not be part of a group.',
        );
      deleteLater(ctx.state, s);
      return ok(202);
    default: {
      authorize(ctx.state, ctx.auth, 'snapshot_extension:snapshot_actions:update_snapshot_status', 'member');
      const status = String(requireProperty('os-update_snapshot_status', arg, 'status'));
      const allowed: Record<string, string[]> = { creating: ['available', 'error'], deleting: ['error_deleting'] };
      if (!(allowed[s.status] ?? []).includes(status))
        throw new ApiError(
          400,
          `Invalid input received: Provided snapshot status ${status} not allowed for snapshot with status ${s.status}.`,
        );
      s.status = status;
      if (typeof arg.progress === 'string') s.progress = arg.progress;
      ctx.state.touch(s);
      return ok(202);
    }
  }
}
