/**
 * The attach-family volume actions (legacy Nova flow and connections): os-attach, os-detach,
 * os-reserve, os-unreserve, os-begin_detaching, os-roll_detaching, os-initialize_connection,
 * os-terminate_connection, os-force_detach — recorded in cinder-21/02, 03, 04, 08.
 */
import { ApiError } from '../http/fault';
import type { Volume } from '../model';
import { pyRepr } from '../pyjson';
import {
  checkDeletionAllowed,
  connectionInfo,
  isAttached,
  legacyAttach,
  legacyDetach,
  type Caller,
} from './attach-core';
import type { ActionDef } from './actions';
import { asObject, ok, type CinderCtx } from './context';
import { authorize } from './policy';
import { noExtraKeys, requireProperty, schemaError } from './validation';

function caller(ctx: CinderCtx): Caller {
  return { isService: ctx.auth.isService, requestId: ctx.req.requestId };
}

/** `os-unreserve`: `attaching` → in-use/available; anything else is a silent no-op. */
function unreserve(ctx: CinderCtx, v: Volume): void {
  if (v.status !== 'attaching') return;
  v.status = v.attachments.length > 0 ? 'in-use' : 'available';
  ctx.state.touch(v);
}

function attachmentIdArg(arg: unknown): string | null {
  const id = asObject(arg)?.attachment_id;
  return typeof id === 'string' ? id : null;
}

export const ATTACH_ACTIONS: Record<string, ActionDef> = {
  'os-attach': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:attach', 'member');
      const a = asObject(arg) ?? {};
      noExtraKeys('os-attach', a, ['instance_uuid', 'host_name', 'mountpoint', 'mode']);
      const mountpoint = requireProperty('os-attach', a, 'mountpoint');
      if (typeof mountpoint !== 'string')
        throw schemaError('mountpoint', mountpoint, `${pyRepr(mountpoint)} is not of type 'string'`);
      const instance = typeof a.instance_uuid === 'string' ? a.instance_uuid : null;
      const host = typeof a.host_name === 'string' ? a.host_name : null;
      if (instance === null && host === null)
        throw schemaError('os-attach', a, `${pyRepr(a)} is not valid under any of the given schemas`);
      const mode = a.mode === undefined ? 'rw' : a.mode;
      if (mode !== 'rw' && mode !== 'ro') throw schemaError('mode', mode, `${pyRepr(mode)} is not one of ['rw', 'ro']`);
      const fail = ctx.state.faults.takeAttach(v.id) !== undefined;
      legacyAttach(ctx.state, v, { instanceUuid: instance, hostName: host, mountpoint, mode }, caller(ctx), fail);
      return ok(202);
    },
  },
  'os-detach': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:detach', 'member');
      legacyDetach(ctx.state, v, attachmentIdArg(arg), caller(ctx));
      return ok(202);
    },
  },
  'os-reserve': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:reserve', 'member');
      const expected = ctx.state.isMultiattach(v) ? ['available', 'in-use'] : ['available'];
      if (!expected.includes(v.status))
        throw new ApiError(
          400,
          `Invalid volume: Volume status must be ${expected.join(' or ')} to reserve, but the status is ${v.status}.`,
        );
      v.status = 'attaching';
      ctx.state.touch(v);
      return ok(202);
    },
  },
  'os-unreserve': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:unreserve', 'member');
      unreserve(ctx, v);
      return ok(202);
    },
  },
  'os-begin_detaching': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:begin_detaching', 'member');
      beginDetaching(ctx.state, v);
      return ok(202);
    },
  },
  'os-roll_detaching': {
    handler: (ctx, v) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:roll_detaching', 'member');
      if (v.status === 'detaching') {
        v.status = 'in-use';
        ctx.state.touch(v);
      }
      return ok(202);
    },
  },
  'os-initialize_connection': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:initialize_connection', 'member');
      const a = asObject(arg) ?? {};
      const connector = requireProperty('os-initialize_connection', a, 'connector');
      if (!asObject(connector))
        throw schemaError('connector', connector, `${pyRepr(connector)} is not of type 'object'`);
      if (v.status === 'maintenance')
        throw new ApiError(400, 'Invalid volume: The volume connection cannot be initialized in maintenance mode.');
      return ok(200, { connection_info: { driver_volume_type: 'iscsi', data: connectionInfo(v) } });
    },
  },
  'os-terminate_connection': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_actions:terminate_connection', 'member');
      requireProperty('os-terminate_connection', asObject(arg) ?? {}, 'connector');
      checkDeletionAllowed(ctx.state, caller(ctx), null, v);
      unreserve(ctx, v);
      return ok(202);
    },
  },
  'os-force_detach': {
    handler: (ctx, v, arg) => {
      authorize(ctx.state, ctx.auth, 'volume_extension:volume_admin_actions:force_detach', 'admin');
      checkDeletionAllowed(ctx.state, caller(ctx), null, v);
      unreserve(ctx, v);
      legacyDetach(ctx.state, v, attachmentIdArg(arg), caller(ctx));
      return ok(202);
    },
  },
};

/** os-begin_detaching (also what Nova calls first on detach). */
export function beginDetaching(state: CinderCtx['state'], v: Volume): void {
  const migrating = v.migrationStatus !== null && !['success', 'error', 'none'].includes(v.migrationStatus);
  if (v.status !== 'in-use' || !isAttached(v) || migrating) {
    throw new ApiError(
      400,
      "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.",
    );
  }
  v.status = 'detaching';
  state.touch(v);
}
