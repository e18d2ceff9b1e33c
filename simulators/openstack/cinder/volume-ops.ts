/**
 * Volume life-cycle operations with their preconditions, messages and asynchronous completion
 * (cinder/volume/api.py + the fake driver's manager side), shared by the HTTP actions, simulated
 * Nova and the seeding API. Each async step is a timer with its configurable delay.
 */
import { cinderTime, nowMicros } from '../clock';
import { ApiError } from '../http/fault';
import { uuid } from '../ids';
import type { Snapshot, Volume } from '../model';
import { backendOf, type SimState } from '../state';
import { isAttached, orList } from './attach-core';
import { Action, createMessage, Detail } from './messages';
import { reserveGigabytes } from './quota';

export interface NewVolume {
  projectId: string;
  userId: string;
  size: number;
  name?: string | null;
  description?: string | null;
  volumeTypeId?: string;
  availabilityZone?: string;
  metadata?: Record<string, string>;
  snapshotId?: string | null;
  sourceVolid?: string | null;
  bootable?: boolean;
  imageMetadata?: Record<string, string> | null;
  status?: string;
  id?: string;
}

/** Stores a volume row as given (no scheduling); the HTTP create then makes it `creating`. */
export function insertVolume(state: SimState, spec: NewVolume): Volume {
  const now = nowMicros();
  const v: Volume = {
    id: spec.id ?? uuid(),
    projectId: spec.projectId,
    userId: spec.userId,
    name: spec.name ?? null,
    description: spec.description ?? null,
    size: spec.size,
    status: spec.status ?? 'available',
    previousStatus: null,
    availabilityZone: spec.availabilityZone ?? state.opts.availabilityZones[0] ?? 'nova',
    volumeTypeId: spec.volumeTypeId ?? state.defaultTypeId,
    snapshotId: spec.snapshotId ?? null,
    sourceVolid: spec.sourceVolid ?? null,
    metadata: { ...(spec.metadata ?? {}) },
    adminMetadata: {},
    imageMetadata: spec.imageMetadata ? { ...spec.imageMetadata } : null,
    bootable: spec.bootable ?? false,
    host: state.opts.pools[0] ?? 'openstack-sim@fake#fake',
    migrationStatus: null,
    replicationStatus: null,
    groupId: null,
    providerId: null,
    encryptionKeyId: null,
    consumesQuota: true,
    attachments: [],
    createdAt: now,
    updatedAt: spec.status === 'creating' ? null : now,
  };
  if (state.volumes.has(v.id)) throw new Error(`volume ${v.id} already exists`);
  state.volumes.set(v.id, v);
  return v;
}

/** `creating` → `available` after createMs (or `error` + a scheduler message when injected). */
export function scheduleCreate(state: SimState, v: Volume, requestId: string): void {
  const fail = state.faults.takeCreate(v.name);
  state.timers.after(state.delays.createMs, () => {
    if (state.volumes.get(v.id) !== v || v.status !== 'creating') return;
    if (fail) {
      v.status = 'error';
      createMessage(state, {
        projectId: v.projectId,
        resourceUuid: v.id,
        action: Action.SCHEDULE_ALLOCATE_VOLUME,
        detail: Detail.NO_BACKEND_AVAILABLE,
        requestId,
      });
    } else {
      v.status = 'available';
    }
    state.touch(v);
  });
}

const DELETABLE = ['available', 'error', 'error_restoring', 'error_extending', 'error_managing'];

export interface DeleteOptions {
  cascade?: boolean;
  force?: boolean;
  /** os-unmanage: `unmanaging`, the backend keeps the data. */
  unmanage?: boolean;
}

/** DELETE /volumes/{id}, os-force_delete and os-unmanage: checks, then `deleting` → gone. */
export function deleteVolume(state: SimState, v: Volume, o: DeleteOptions): void {
  const snaps = state.snapshotsOf(v.id);
  const statusOk = o.force === true || DELETABLE.includes(v.status);
  const migrationOk = v.migrationStatus === null || ['deleting', 'error', 'success'].includes(v.migrationStatus);
  const snapsOk = o.cascade
    ? snaps.every((s) => (o.force ? true : ['available', 'error', 'deleting'].includes(s.status)))
    : snaps.length === 0;
  if (!statusOk || isAttached(v) || !migrationOk || v.groupId !== null || !snapsOk) {
    const status = o.force ? '' : `status must be ${orList(DELETABLE)} and`;
    throw new ApiError(
      400,
      `Invalid volume: Volume ${status} must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.`,
    );
  }
  v.status = o.unmanage ? 'unmanaging' : 'deleting';
  state.touch(v);
  if (o.cascade) for (const s of snaps) setSnapshotStatus(state, s, 'deleting');
  state.timers.after(o.unmanage ? state.delays.unmanageMs : state.delays.deleteMs, () => {
    if (state.volumes.get(v.id) !== v) return;
    for (const s of state.snapshotsOf(v.id)) state.snapshots.delete(s.id);
    state.volumes.delete(v.id);
  });
}

function setSnapshotStatus(state: SimState, s: Snapshot, status: string): void {
  s.status = status;
  state.touch(s);
}

/**
 * os-extend: size check, then status check (available, or in-use when `attached`), then
 * `extending` → previous status with the new size after extendMs; an injected failure ends in
 * `error_extending` (size unchanged) with the EXTEND_VOLUME user message.
 */
export function extendVolume(state: SimState, v: Volume, newSize: number, attached: boolean, requestId: string): void {
  if (newSize - v.size <= 0) {
    throw new ApiError(
      400,
      `Invalid input received: New size for extend must be greater than current size. (current: ${v.size}, extended: ${newSize}).`,
    );
  }
  const expected = attached ? 'in-use' : 'available';
  if (v.status !== expected) {
    throw new ApiError(
      400,
      `Invalid volume: Volume ${v.id} status must be '{'status': '${expected}'}' to extend, currently ${v.status}.`,
    );
  }
  reserveGigabytes(state, v.projectId, newSize - v.size);
  const fail = state.faults.takeExtend(v.id);
  v.previousStatus = v.status;
  v.status = 'extending';
  v.adminMetadata.extend_new_size = String(newSize);
  state.touch(v);
  state.timers.after(state.delays.extendMs, () => {
    if (state.volumes.get(v.id) !== v || v.status !== 'extending') return;
    finishExtend(state, v, !fail, requestId, Detail.DRIVER_FAILED_EXTEND);
  });
}

/** Ends an extend: success → new size and previous status; failure → `error_extending` + message. */
export function finishExtend(
  state: SimState,
  v: Volume,
  success: boolean,
  requestId: string,
  detail: readonly [string, string],
): void {
  const newSize = Number(v.adminMetadata.extend_new_size ?? v.size);
  delete v.adminMetadata.extend_new_size;
  if (success) {
    v.size = newSize;
    v.status = v.previousStatus ?? 'available';
  } else {
    v.status = 'error_extending';
    createMessage(state, {
      projectId: v.projectId,
      resourceUuid: v.id,
      action: Action.EXTEND_VOLUME,
      detail,
      requestId,
    });
  }
  state.touch(v);
}

/** Moves a volume to a transitional status and back to the previous one after `ms`. */
export function transient(state: SimState, v: Volume, status: string, ms: number, done?: () => void): void {
  v.previousStatus = v.status;
  v.status = status;
  state.touch(v);
  state.timers.after(ms, () => {
    if (state.volumes.get(v.id) !== v || v.status !== status) return;
    v.status = v.previousStatus ?? 'available';
    done?.();
    state.touch(v);
  });
}

/** os-retype: `retyping` → previous status with the new type after retypeMs. */
export function retypeVolume(
  state: SimState,
  v: Volume,
  newTypeRef: string,
  migrationPolicy: string | undefined,
): void {
  if (!['available', 'in-use'].includes(v.status)) {
    throw new ApiError(
      400,
      `Invalid volume: Unable to update type due to incorrect status: ${v.status} on volume: ${v.id}. Volume status must be available or in-use.`,
    );
  }
  if (v.migrationStatus !== null && !['success', 'error', 'none'].includes(v.migrationStatus)) {
    throw new ApiError(400, `Invalid volume: Volume ${v.id} is already part of an active migration.`);
  }
  if (migrationPolicy !== undefined && migrationPolicy !== 'on-demand' && migrationPolicy !== 'never') {
    throw new ApiError(
      400,
      `Invalid input received: migration_policy must be 'on-demand' or 'never', passed: ${newTypeRef}`,
    );
  }
  const t = state.findType(newTypeRef);
  if (!t) throw new ApiError(400, `Invalid input received: Invalid volume_type passed: ${newTypeRef}.`);
  if (state.isMultiattach(v) !== state.isMultiattachType(t) && v.status !== 'available') {
    throw new ApiError(
      400,
      `Invalid input received: Invalid volume_type passed, retypes affecting multiattach are only allowed on available volumes, the specified volume however currently has a status of: ${v.status}.`,
    );
  }
  if (t.id === v.volumeTypeId)
    throw new ApiError(400, `Invalid input received: New volume_type same as original: ${t.id}.`);
  transient(state, v, 'retyping', state.delays.retypeMs, () => {
    v.volumeTypeId = t.id;
  });
}

/** os-revert (≥ 3.40): latest snapshot only, equal sizes; volume `reverting`, snapshot `restoring`. */
export function revertVolume(state: SimState, v: Volume, snapshotId: string | undefined): void {
  const snaps = state.snapshotsOf(v.id).sort((a, b) => b.createdAt - a.createdAt);
  const latest = snaps[0];
  if (!latest) throw new ApiError(400, `Volume ${v.id} doesn't have any snapshots.`);
  if (snapshotId === undefined || snapshotId !== latest.id) {
    throw new ApiError(
      400,
      `Specified snapshot ${snapshotId ?? 'None'} is None or not the latest one of volume ${v.id}.`,
    );
  }
  if (v.size !== latest.size) {
    throw new ApiError(
      400,
      `Can't revert volume ${v.id} to its latest snapshot ${latest.id}. The volume size must be equal to the snapshot size.`,
    );
  }
  if (v.status !== 'available')
    throw new ApiError(
      409,
      `Invalid volume: Can't revert volume ${v.id} to its latest snapshot. Volume's status must be 'available'.`,
    );
  if (latest.status !== 'available')
    throw new ApiError(
      409,
      `Invalid snapshot: Can't revert volume ${v.id} to its latest snapshot. Snapshot's status must be 'available'.`,
    );
  setSnapshotStatus(state, latest, 'restoring');
  transient(state, v, 'reverting', state.delays.revertMs, () => {
    if (state.snapshots.get(latest.id) === latest) setSnapshotStatus(state, latest, 'available');
  });
}

/** os-reimage (≥ 3.68): `downloading` → previous status, image metadata replaced. */
export function reimageVolume(state: SimState, v: Volume, imageId: string, reimageReserved: boolean): void {
  if (v.attachments.length > 1)
    throw new ApiError(409, 'Cannot re-image a volume which is attached to more than one server.');
  const expected = reimageReserved ? ['available', 'error', 'reserved'] : ['available', 'error'];
  if (!expected.includes(v.status)) {
    throw new ApiError(
      400,
      `Invalid volume: Volume ${v.id} status must be ${orList(expected)}, but current status is ${v.status}.`,
    );
  }
  transient(state, v, 'downloading', state.delays.reimageMs, () => {
    v.imageMetadata = { image_id: imageId };
    v.bootable = true;
  });
}

/** os-migrate_volume (admin): migration_status starting → migrating → success, host moves. */
export function migrateVolume(state: SimState, v: Volume, host: string, lockVolume: boolean): void {
  if (!['available', 'in-use'].includes(v.status)) {
    throw new ApiError(
      400,
      `Invalid volume: Volume ${v.id} status must be available or in-use, but current status is: ${v.status}.`,
    );
  }
  if (v.migrationStatus !== null && !['success', 'error', 'none'].includes(v.migrationStatus)) {
    throw new ApiError(400, `Invalid volume: Volume ${v.id} is already part of an active migration.`);
  }
  if (state.snapshotsOf(v.id).length > 0)
    throw new ApiError(400, `Invalid volume: Volume ${v.id} must not have snapshots.`);
  const pool = state.opts.pools.find((p) => p === host || backendOf(p) === host);
  if (!pool) throw new ApiError(400, `Invalid host: No available service named ${host}`);
  if (backendOf(pool) === backendOf(v.host))
    throw new ApiError(400, 'Invalid host: Destination host must be different than the current host.');
  v.previousStatus = v.status;
  v.migrationStatus = 'starting';
  if (lockVolume && v.status === 'available') v.status = 'maintenance';
  state.touch(v);
  state.timers.after(state.delays.migrateMs, () => {
    if (state.volumes.get(v.id) !== v || v.migrationStatus !== 'starting') return;
    v.migrationStatus = 'migrating';
    state.touch(v);
    state.timers.after(state.delays.migrateMs, () => {
      if (state.volumes.get(v.id) !== v || v.migrationStatus !== 'migrating') return;
      v.migrationStatus = 'success';
      v.host = pool;
      if (v.status === 'maintenance') v.status = v.previousStatus ?? 'available';
      state.touch(v);
    });
  });
}

/** os-volume_upload_image: `uploading` → previous status; returns the action's response body. */
export function uploadVolume(
  state: SimState,
  v: Volume,
  p: {
    imageName: string;
    force: boolean;
    diskFormat: string;
    containerFormat: string;
    visibility?: string;
    protected?: boolean;
  },
): Record<string, unknown> {
  if (!['available', 'in-use'].includes(v.status))
    throw new ApiError(400, 'Invalid volume: Volume status must be available/in-use.');
  if (!p.force && v.status === 'in-use') throw new ApiError(400, 'Invalid volume: Volume status is in-use.');
  transient(state, v, 'uploading', state.delays.uploadMs);
  const t = state.typeOf(v);
  const out: Record<string, unknown> = {
    id: v.id,
    updated_at: cinderTime(v.updatedAt),
    status: 'uploading',
    display_description: v.description,
    size: v.size,
    volume_type: t
      ? {
          id: t.id,
          name: t.name,
          description: t.description,
          is_public: t.isPublic,
          extra_specs: { ...t.extraSpecs },
          qos_specs_id: null,
        }
      : null,
    image_id: uuid(),
    container_format: p.containerFormat,
    disk_format: p.diskFormat,
    image_name: p.imageName,
  };
  if (p.visibility !== undefined) out.visibility = p.visibility;
  if (p.protected !== undefined) out.protected = p.protected;
  return out;
}
