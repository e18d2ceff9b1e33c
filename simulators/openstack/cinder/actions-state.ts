/**
 * The volume actions that change size, type, status or image data: os-extend,
 * os-extend_volume_completion (3.71 servers), os-reset_status, revert (≥ 3.40),
 * os-set/unset/show_image_metadata, os-unmanage, os-retype, os-migrate_volume(_completion),
 * os-force_delete, os-set_bootable, os-volume_upload_image, os-update_readonly_flag,
 * os-reimage (≥ 3.68). Recorded in cinder-21/06, 07, 08, 09 and keystone-22/01.
 */
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import { pyRepr, pyStr } from '../pyjson';
import { removeAttachment } from './attach-core';
import type { ActionDef } from './actions';
import { asObject, ok } from './context';
import { Detail } from './messages';
import { authorize } from './policy';
import { boolValue, metadataValue, requireProperty, schemaError, sizeValue } from './validation';
import {
  deleteVolume,
  extendVolume,
  finishExtend,
  migrateVolume,
  reimageVolume,
  retypeVolume,
  revertVolume,
  uploadVolume,
} from './volume-ops';

export const VOLUME_STATUSES = [
  'creating',
  'available',
  'deleting',
  'error',
  'error_deleting',
  'error_managing',
  'managing',
  'attaching',
  'in-use',
  'detaching',
  'maintenance',
  'restoring-backup',
  'error_restoring',
  'reserved',
  'awaiting-transfer',
  'backing-up',
  'error_backing-up',
  'error_extending',
  'downloading',
  'uploading',
  'retyping',
  'extending',
];
const ATTACH_STATUSES = ['attached', 'detached'];
const MIGRATION_STATUSES = ['migrating', 'error', 'success', 'completing', 'none', 'starting'];
const DISK_FORMATS = ['raw', 'vmdk', 'vdi', 'qcow2', 'vhd', 'vhdx', 'ploop'];

function tuple(items: string[]): string {
  return `(${items.map(pyRepr).join(', ')})`;
}

const MAINTENANCE = 'Invalid volume: The volume cannot be updated during maintenance.';

export const STATE_ACTIONS: Record<string, ActionDef> = {
  'os-extend': {
    handler: (ctx, v, arg) => {
      const size = sizeValue('new_size', requireProperty('os-extend', asObject(arg) ?? {}, 'new_size'));
      const attached = atLeast(ctx.mv, '3.42') && v.status === 'in-use';
      authorize(ctx.state, ctx.auth, attached ? 'volume:extend_attached_volume' : 'volume:extend', 'member');
      extendVolume(ctx.state, v, size, attached, ctx.req.requestId);
      return ok(202);
    },
  },
  'os-extend_volume_completion': {
    serverMin: '3.71',
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume:extend_complete', 'admin_or_service');
      const error = boolValue('error', requireProperty('os-extend_volume_completion', asObject(arg) ?? {}, 'error'));
      if (v.status !== 'extending' || v.adminMetadata.extend_new_size === undefined) {
        throw new ApiError(
          400,
          `Invalid volume: Volume ${v.id} status must be 'extending' and it must have an extend in progress, currently ${v.status}.`,
        );
      }
      finishExtend(ctx.state, v, !error, ctx.req.requestId, Detail.NOTIFY_COMPUTE_SERVICE_FAILED);
      return ok(202);
    },
  },
  'os-reset_status': {
    handler: (ctx, v, arg) => {
      const a = asObject(arg) ?? {};
      const { status, attach_status: attachStatus, migration_status: migrationStatus } = a;
      if (status === undefined && attachStatus === undefined && migrationStatus === undefined) {
        throw new ApiError(400, "Must specify 'status', 'attach_status' or 'migration_status' for update.");
      }
      if (status !== undefined && !VOLUME_STATUSES.includes(pyStr(status)))
        throw new ApiError(
          400,
          `Volume status: ${pyStr(status)} is invalid, valid statuses are: ${tuple(VOLUME_STATUSES)}.`,
        );
      if (attachStatus !== undefined && !ATTACH_STATUSES.includes(pyStr(attachStatus)))
        throw new ApiError(
          400,
          `Volume attach status: ${pyStr(attachStatus)} is invalid, valid statuses are: ${tuple(ATTACH_STATUSES)}.`,
        );
      if (migrationStatus !== undefined && !MIGRATION_STATUSES.includes(pyStr(migrationStatus)))
        throw new ApiError(
          400,
          `Volume migration status: ${pyStr(migrationStatus)} is invalid, valid statuses are: ${tuple(MIGRATION_STATUSES)}.`,
        );
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_admin_actions:reset_status', 'admin');
      if (status === 'in-use' && v.attachments.length === 0 && attachStatus !== 'attached') {
        throw new ApiError(
          400,
          'Invalid volume: Cannot reset-state to in-use because volume does not have any attachments.',
        );
      }
      if (attachStatus === 'detached') for (const att of [...v.attachments]) removeAttachment(ctx.state, v, att);
      if (status !== undefined) v.status = pyStr(status);
      if (migrationStatus !== undefined) v.migrationStatus = migrationStatus === 'none' ? null : pyStr(migrationStatus);
      ctx.state.touch(v);
      return ok(202);
    },
  },
  revert: {
    minMv: '3.40',
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume:revert_to_snapshot', 'member');
      const id = asObject(arg)?.snapshot_id;
      revertVolume(ctx.state, v, typeof id === 'string' ? id : undefined);
      return ok(202);
    },
  },
  'os-set_image_metadata': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_image_metadata:set', 'member');
      const md = metadataValue('metadata', requireProperty('os-set_image_metadata', asObject(arg) ?? {}, 'metadata'));
      if (v.status === 'maintenance') throw new ApiError(400, MAINTENANCE);
      v.imageMetadata = { ...(v.imageMetadata ?? {}), ...md };
      ctx.state.touch(v);
      return ok(200, { metadata: { ...v.imageMetadata } });
    },
  },
  'os-unset_image_metadata': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_image_metadata:remove', 'member');
      const key = requireProperty('os-unset_image_metadata', asObject(arg) ?? {}, 'key');
      if (typeof key !== 'string' || !v.imageMetadata || !(key in v.imageMetadata)) {
        throw new ApiError(404, `Glance metadata for volume/snapshot ${v.id} cannot be found.`);
      }
      delete v.imageMetadata[key];
      if (Object.keys(v.imageMetadata).length === 0) v.imageMetadata = null;
      ctx.state.touch(v);
      return { status: 200, emptyAs: 'html' };
    },
  },
  'os-show_image_metadata': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_image_metadata:show', 'reader');
      return ok(200, { metadata: { ...(v.imageMetadata ?? {}) } });
    },
  },
  'os-unmanage': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_unmanage', 'admin');
      deleteVolume(ctx.state, v, { unmanage: true });
      return ok(202);
    },
  },
  'os-retype': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume:retype', 'member');
      const a = asObject(arg) ?? {};
      const newType = requireProperty('os-retype', a, 'new_type');
      const policy = a.migration_policy;
      retypeVolume(ctx.state, v, pyStr(newType), policy === undefined || policy === null ? undefined : pyStr(policy));
      return ok(202);
    },
  },
  'os-migrate_volume': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_admin_actions:migrate_volume', 'admin');
      const a = asObject(arg) ?? {};
      const host = a.host ?? (atLeast(ctx.mv, '3.16') ? a.cluster : undefined);
      if (typeof host !== 'string')
        throw new ApiError(400, 'Invalid input received: Must specify host or cluster for migration.');
      migrateVolume(ctx.state, v, host, a.lock_volume === undefined ? false : boolValue('lock_volume', a.lock_volume));
      return ok(202);
    },
  },
  'os-migrate_volume_completion': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_admin_actions:migrate_volume_completion', 'admin');
      const a = asObject(arg) ?? {};
      const newId = requireProperty('os-migrate_volume_completion', a, 'new_volume');
      if (typeof newId !== 'string' || !ctx.state.volumes.has(newId))
        throw new ApiError(404, `Volume ${String(newId)} could not be found.`);
      const error = a.error === undefined ? false : boolValue('error', a.error);
      if (v.migrationStatus === null || ['success', 'error', 'none'].includes(v.migrationStatus))
        throw new ApiError(400, 'Invalid volume: Source volume not mid-migration.');
      v.migrationStatus = error ? 'error' : 'success';
      if (v.status === 'maintenance') v.status = v.previousStatus ?? 'available';
      ctx.state.touch(v);
      return ok(200, { save_volume_id: v.id });
    },
  },
  'os-force_delete': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_admin_actions:force_delete', 'admin');
      deleteVolume(ctx.state, v, { force: true });
      return ok(202);
    },
  },
  'os-set_bootable': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume:update', 'member');
      const bootable = boolValue('bootable', requireProperty('os-set_bootable', asObject(arg) ?? {}, 'bootable'));
      if (v.status === 'maintenance') throw new ApiError(400, MAINTENANCE);
      v.bootable = bootable;
      ctx.state.touch(v);
      return ok(200);
    },
  },
  'os-volume_upload_image': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:upload_image', 'member');
      const a = asObject(arg) ?? {};
      const name = requireProperty('os-volume_upload_image', a, 'image_name');
      if (typeof name !== 'string') throw schemaError('image_name', name, `${pyRepr(name)} is not of type 'string'`);
      const force = a.force === undefined ? false : boolValue('force', a.force);
      const diskFormat = typeof a.disk_format === 'string' ? a.disk_format : 'raw';
      if (!DISK_FORMATS.includes(diskFormat))
        throw new ApiError(
          400,
          `Invalid disk-format '${diskFormat}' is specified. Allowed disk-formats are ${DISK_FORMATS.join(', ')}.`,
        );
      const params: Parameters<typeof uploadVolume>[2] = {
        imageName: name,
        force,
        diskFormat,
        containerFormat: typeof a.container_format === 'string' ? a.container_format : 'bare',
      };
      if (atLeast(ctx.mv, '3.1')) {
        params.visibility = typeof a.visibility === 'string' ? a.visibility : 'private';
        params.protected = a.protected === undefined ? false : boolValue('protected', a.protected);
        if (params.visibility === 'public')
          authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:upload_public', 'admin');
      }
      return ok(202, { 'os-volume_upload_image': uploadVolume(ctx.state, v, params) });
    },
  },
  'os-update_readonly_flag': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume:update_readonly_flag', 'member');
      const ro = boolValue('readonly', requireProperty('os-update_readonly_flag', asObject(arg) ?? {}, 'readonly'));
      if (v.status !== 'available')
        throw new ApiError(
          400,
          `Invalid volume: Volume ${v.id} status must be available to update readonly flag, but current status is: ${v.status}.`,
        );
      v.adminMetadata.readonly = ro ? 'True' : 'False';
      ctx.state.touch(v);
      return ok(202);
    },
  },
  'os-reimage': {
    minMv: '3.68',
    handler: (ctx, v, arg) => {
      const a = asObject(arg) ?? {};
      const imageId = requireProperty('os-reimage', a, 'image_id');
      if (typeof imageId !== 'string')
        throw schemaError('image_id', imageId, `${pyRepr(imageId)} is not of type 'string'`);
      const reserved = a.reimage_reserved === undefined ? false : boolValue('reimage_reserved', a.reimage_reserved);
      authorize(
        ctx.state,
        ctx.auth,
        v.status === 'reserved' ? 'volume:reimage_reserved' : 'volume:reimage',
        v.status === 'reserved' ? 'admin_or_service' : 'member',
      );
      reimageVolume(ctx.state, v, imageId, reserved);
      return ok(202);
    },
  },
};
