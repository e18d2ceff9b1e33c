/**
 * Cinder's attachment bookkeeping (volume/api.py attachment_* and the legacy attach/detach,
 * db volume_attached/volume_detached), shared by the Cinder HTTP handlers and simulated Nova.
 * Every function checks what Cinder checks, with its messages, and mutates the shared state.
 */
import { nowMicros } from '../clock';
import { ApiError, GENERIC_500 } from '../http/fault';
import { uuid } from '../ids';
import type { Attachment, Volume } from '../model';
import type { SimState } from '../state';
import { Action, createMessage, Detail } from './messages';

/** The caller, as far as attachment rules care. */
export interface Caller {
  isService: boolean;
  requestId: string;
}

/** Volume attach_status: `attached` when any attachment is. */
export function isAttached(v: Volume): boolean {
  return v.attachments.some((a) => a.attachStatus === 'attached');
}

/**
 * Status after an attachment goes away (db `_volume_status_from_attachments`): the first of the
 * remaining attach statuses in alphabetical order, ignoring error_*; attached → in-use, none →
 * available, others verbatim (so a lone `reserved` attachment leaves the volume `reserved`).
 */
export function statusFromAttachments(v: Volume): string {
  const statuses = v.attachments
    .map((a) => a.attachStatus)
    .filter((s) => !s.startsWith('error'))
    .sort();
  const first = statuses[0];
  if (first === undefined) return 'available';
  return first === 'attached' ? 'in-use' : first;
}

/** `utils.build_or_str`. */
export function orList(items: readonly string[]): string {
  return items.join(' or ');
}

/** POST /attachments without connector (and Nova's reserve): attachment `reserved`, volume `reserved`. */
export function reserveAttachment(state: SimState, v: Volume, instanceUuid: string | null, mode?: string): Attachment {
  const multi = state.isMultiattach(v);
  const expected = multi ? ['available', 'in-use', 'downloading'] : ['available', 'downloading'];
  if (expected.includes(v.status)) {
    v.status = 'reserved';
  } else {
    // Re-attaching the same instance (live migration) is allowed (LP #1694530).
    const override =
      instanceUuid !== null &&
      (v.status === 'in-use' || v.status === 'reserved') &&
      v.attachments.some((a) => a.instanceUuid === instanceUuid);
    if (!override) {
      throw new ApiError(
        400,
        `Invalid volume: Volume ${v.id} status must be ${orList(expected)} to reserve, but the current status is ${v.status}.`,
      );
    }
  }
  const a: Attachment = {
    id: uuid(),
    volumeId: v.id,
    instanceUuid,
    attachedHost: null,
    mountpoint: null,
    attachTime: null,
    detachTime: null,
    // Cinder tests admin_metadata.get('readonly', False): the string "False" is truthy, so any
    // readonly key (even "False") makes the mode 'ro' — as recorded in cinder-21/05.
    attachMode: 'readonly' in v.adminMetadata ? 'ro' : (mode ?? 'null'),
    attachStatus: 'reserved',
    connectionInfo: null,
    connector: null,
    createdAt: nowMicros(),
  };
  v.attachments.push(a);
  state.touch(v);
  return a;
}

/** The driver's connection info (fake iSCSI driver as recorded), keys in recorded order. */
export function connectionInfo(v: Volume, attachmentId?: string): Record<string, unknown> {
  const access = v.adminMetadata.attached_mode ?? (v.adminMetadata.readonly === 'True' ? 'ro' : 'rw');
  const info: Record<string, unknown> = {
    access_mode: access,
    qos_specs: null,
    encrypted: v.encryptionKeyId !== null,
    cacheable: false,
  };
  if (attachmentId === undefined) return info;
  return { ...info, driver_volume_type: 'iscsi', attachment_id: attachmentId };
}

/**
 * Connector update (manager attachment_update): attachment and volume `attaching`, attach time,
 * host and mountpoint from the connector. An injected failure (or a rw connect of a readonly
 * volume) leaves the attachment `error_attaching`, writes the UPDATE_ATTACHMENT user message and
 * raises the 500 the RPC error becomes.
 */
export function connectAttachment(
  state: SimState,
  v: Volume,
  a: Attachment,
  connector: Record<string, unknown>,
  caller: Caller,
  injectedFailure: boolean,
): Record<string, unknown> {
  const info = connectionInfo(v, a.id);
  a.connectionInfo = info;
  a.connector = connector;
  a.attachStatus = 'attaching';
  let mode = typeof connector.mode === 'string' ? connector.mode : 'rw';
  if (a.attachMode !== 'null') mode = a.attachMode;
  const badMode = v.adminMetadata.readonly === 'True' && mode !== 'ro';
  if (injectedFailure || badMode) {
    a.attachStatus = 'error_attaching';
    createMessage(state, {
      projectId: v.projectId,
      resourceUuid: v.id,
      action: Action.UPDATE_ATTACHMENT,
      detail: badMode ? Detail.VOLUME_ATTACH_MODE_INVALID : Detail.UNKNOWN_ERROR,
      requestId: caller.requestId,
    });
    state.touch(v);
    throw new ApiError(500, GENERIC_500);
  }
  a.attachTime = nowMicros();
  a.attachedHost = typeof connector.host === 'string' ? connector.host : null;
  a.mountpoint = typeof connector.mountpoint === 'string' ? connector.mountpoint : 'na';
  a.attachMode = mode;
  v.status = 'attaching';
  state.touch(v);
  return info;
}

/** os-complete: attachment `attached`, volume `in-use`. */
export function completeAttachment(state: SimState, v: Volume, a: Attachment): void {
  a.attachStatus = 'attached';
  a.attachTime ??= nowMicros();
  v.status = 'in-use';
  state.touch(v);
}

/** Removes an attachment row and recomputes the volume status (db volume_detached). */
export function removeAttachment(state: SimState, v: Volume, a: Attachment): void {
  v.attachments = v.attachments.filter((x) => x.id !== a.id);
  delete v.adminMetadata.attached_mode;
  v.status = statusFromAttachments(v);
  state.touch(v);
}

/**
 * Bug #2004555 guard (attachment_deletion_allowed): a non-service caller may not remove an
 * attachment that has connection info and that Nova still uses, nor an unknown or ambiguous one.
 */
export function checkDeletionAllowed(state: SimState, caller: Caller, attachmentId: string | null, v?: Volume): void {
  if (caller.isService) return;
  let a: Attachment | undefined;
  if (attachmentId === null && v) {
    if (v.attachments.length === 0) return;
    if (v.attachments.length === 1) a = v.attachments[0];
  } else if (attachmentId !== null) {
    const found = state.findAttachment(attachmentId);
    if (found) {
      if (v && found.volume.id !== v.id)
        throw new ApiError(400, 'Invalid input received: Mismatched volumes on attachment request');
      a = found.attachment;
    }
  }
  if (a) {
    if (!a.connectionInfo || !a.instanceUuid) return;
    const server = state.servers.get(a.instanceUuid);
    const usedByNova = server?.bdms.some((b) => b.attachmentId === a.id) ?? false;
    if (!usedByNova) return;
  }
  throw new ApiError(
    409,
    `ConflictNovaUsingAttachment: Detach volume from instance ${a?.instanceUuid ?? ''} using the Compute API`,
  );
}

/** The text (traceback included) real Cinder returned for os-attach of an in-use volume (cinder-21/08). */
const ALREADY_ATTACHED_TRACE =
  'Invalid volume: volume is already attached and multiple attachments are not enabled\nTraceback (most recent call last):\n\n  File "/usr/lib/python3/dist-packages/oslo_messaging/rpc/server.py", line 165, in _process_incoming\n    res = self.dispatcher.dispatch(message)\n          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\n  File "/usr/lib/python3/dist-packages/oslo_messaging/rpc/dispatcher.py", line 309, in dispatch\n    return self._do_dispatch(endpoint, method, ctxt, args)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\n  File "/usr/lib/python3/dist-packages/oslo_messaging/rpc/dispatcher.py", line 229, in _do_dispatch\n    result = func(ctxt, **new_args)\n             ^^^^^^^^^^^^^^^^^^^^^^\n\n  File "/usr/lib/python3/dist-packages/decorator.py", line 232, in fun\n    return caller(func, *(extras + args), **kw)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\n  File "/usr/lib/python3/dist-packages/cinder/coordination.py", line 200, in _synchronized\n    return f(*a, **k)\n           ^^^^^^^^^^\n\n  File "/usr/lib/python3/dist-packages/cinder/volume/manager.py", line 1451, in attach_volume\n    raise exception.InvalidVolume(\n\ncinder.exception.InvalidVolume: Invalid volume: volume is already attached and multiple attachments are not enabled\n';

export interface LegacyAttachSpec {
  instanceUuid: string | null;
  hostName: string | null;
  mountpoint: string;
  mode: string;
}

/** os-attach (legacy, synchronous RPC call): attachment `attached`, volume `in-use`. */
export function legacyAttach(
  state: SimState,
  v: Volume,
  spec: LegacyAttachSpec,
  caller: Caller,
  injectedFailure: boolean,
): Attachment {
  if (v.status === 'maintenance')
    throw new ApiError(400, 'Invalid volume: The volume cannot be attached in maintenance mode.');
  if (!('readonly' in v.adminMetadata)) v.adminMetadata.readonly = 'False';
  if (v.adminMetadata.readonly === 'True' && spec.mode !== 'ro')
    throw new ApiError(400, `Invalid attaching mode '${spec.mode}' for volume ${v.id}.`);
  if (v.status === 'in-use' && !state.isMultiattach(v) && !v.migrationStatus)
    throw new ApiError(400, ALREADY_ATTACHED_TRACE);
  const a: Attachment = {
    id: uuid(),
    volumeId: v.id,
    instanceUuid: spec.instanceUuid,
    attachedHost: spec.hostName === null ? null : spec.hostName.replace(/[^A-Za-z0-9.\-_]/g, '_'),
    mountpoint: spec.mountpoint,
    attachTime: null,
    detachTime: null,
    attachMode: spec.mode,
    attachStatus: 'attaching',
    connectionInfo: null,
    connector: null,
    createdAt: nowMicros(),
  };
  v.attachments.push(a);
  if (injectedFailure) {
    a.attachStatus = 'error_attaching';
    createMessage(state, {
      projectId: v.projectId,
      resourceUuid: v.id,
      action: Action.ATTACH_VOLUME,
      detail: Detail.UNKNOWN_ERROR,
      requestId: caller.requestId,
    });
    state.touch(v);
    throw new ApiError(500, GENERIC_500);
  }
  a.attachStatus = 'attached';
  a.attachTime = nowMicros();
  v.status = 'in-use';
  v.adminMetadata.attached_mode = spec.mode;
  state.touch(v);
  return a;
}

/** os-detach (legacy): removes the named (or only) attachment; none at all → just `available`. */
export function legacyDetach(state: SimState, v: Volume, attachmentId: string | null, caller: Caller): void {
  checkDeletionAllowed(state, caller, attachmentId, v);
  if (v.status === 'maintenance')
    throw new ApiError(400, 'Invalid volume: The volume cannot be detached in maintenance mode.');
  let a: Attachment | undefined;
  if (attachmentId !== null) {
    a = v.attachments.find((x) => x.id === attachmentId);
    if (!a)
      throw new ApiError(404, `Volume attachment could not be found with filter: attachment_id = ${attachmentId}.`);
  } else if (v.attachments.length > 1) {
    throw new ApiError(
      400,
      'Error detaching volume - InvalidVolume: Detach volume failed: More than one attachment, but no attachment_id provided.',
    );
  } else {
    a = v.attachments[0];
  }
  if (!a) {
    // "We assume that the volume has already been detached."
    v.status = 'available';
    state.touch(v);
    return;
  }
  removeAttachment(state, v, a);
}
