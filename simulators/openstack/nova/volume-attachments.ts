/**
 * /v2.1/servers/{id}/os-volume_attachments (nova-26/01–03; openstack/nova
 * nova/api/openstack/compute/volume_attachments.py and its schema): list, show, attach (200 with a
 * body up to 2.100, 202 without from 2.101), update (swap before 2.85, delete_on_termination from
 * 2.85) and detach (202), with the element shape per microversion.
 */
import { beginDetaching } from '../cinder/actions-attach';
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import type { Bdm, Server, Volume } from '../model';
import { pyRepr, pyStr } from '../pyjson';
import { attachVolume, DEVICE_RE, scheduleDetach, scheduleSwap, viaCinder } from './compute';
import { actionCaller, can, getInstance, invalidState, type NovaCtx, type NovaResult } from './context';

const POLICY = 'os_compute_api:os-volumes-attachments';
/** `check_instance_state` of attach_volume / detach_volume. */
const ATTACH_STATES = ['active', 'paused', 'stopped', 'resized', 'soft_deleted', 'shelved', 'shelved_offloaded'];
const SWAP_STATES = ['active', 'paused', 'resized', 'stopped', 'suspended'];
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
/** Nova's parameter_types.boolean enum. */
const NOVA_BOOL: Record<string, boolean> = {
  True: true,
  TRUE: true,
  true: true,
  '1': true,
  ON: true,
  On: true,
  on: true,
  YES: true,
  Yes: true,
  yes: true,
  False: false,
  FALSE: false,
  false: false,
  '0': false,
  OFF: false,
  Off: false,
  off: false,
  NO: false,
  No: false,
  no: false,
};

function bodyError(field: string, value: unknown, message: string): ApiError {
  return new ApiError(400, `Invalid input for field/attribute ${field}. Value: ${pyStr(value)}. ${message}`);
}

function novaBool(field: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && v in NOVA_BOOL) return NOVA_BOOL[v]!;
  const list = [
    true,
    ...Object.keys(NOVA_BOOL).filter((k) => NOVA_BOOL[k]),
    false,
    ...Object.keys(NOVA_BOOL).filter((k) => !NOVA_BOOL[k]),
  ];
  throw bodyError(field, v, `${pyRepr(v)} is not one of [${list.map(pyRepr).join(', ')}]`);
}

/** The `volumeAttachment` object of a body, checked against the schema of this microversion. */
function attachmentBody(ctx: NovaCtx, allowed: string[]): Record<string, unknown> {
  const body = ctx.body;
  const va =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>).volumeAttachment
      : undefined;
  if (typeof va !== 'object' || va === null || Array.isArray(va))
    throw new ApiError(400, "'volumeAttachment' is a required property");
  const obj = va as Record<string, unknown>;
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw bodyError(
      'volumeAttachment',
      obj,
      `Additional properties are not allowed (${extra.map(pyRepr).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  if (!('volumeId' in obj)) throw bodyError('volumeAttachment', obj, "'volumeId' is a required property");
  if (typeof obj.volumeId !== 'string' || !UUID_RE.test(obj.volumeId))
    throw bodyError('volumeId', obj.volumeId, `${pyRepr(obj.volumeId)} is not a 'uuid'`);
  if (
    obj.device !== undefined &&
    obj.device !== null &&
    (typeof obj.device !== 'string' || !DEVICE_RE.test(obj.device))
  ) {
    throw bodyError(
      'device',
      obj.device,
      `${pyRepr(obj.device)} does not match '(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$'`,
    );
  }
  if (obj.tag !== undefined) {
    if (typeof obj.tag !== 'string') throw bodyError('tag', obj.tag, `${pyRepr(obj.tag)} is not of type 'string'`);
    if (obj.tag.length > 60) throw bodyError('tag', obj.tag, `${pyRepr(obj.tag)} is too long`);
    if (!/^[^,/]*$/.test(obj.tag)) throw bodyError('tag', obj.tag, `${pyRepr(obj.tag)} does not match '^[^,/]*$'`);
  }
  return obj;
}

/** One element of the list/show answers. */
function attachmentView(ctx: NovaCtx, s: Server, b: Bdm): Record<string, unknown> {
  const out: Record<string, unknown> = atLeast(ctx.mv, '2.89') ? {} : { id: b.volumeId };
  out.volumeId = b.volumeId;
  out.serverId = s.id;
  if (b.deviceName) out.device = b.deviceName;
  if (atLeast(ctx.mv, '2.70')) out.tag = b.tag;
  if (atLeast(ctx.mv, '2.79')) out.delete_on_termination = b.deleteOnTermination;
  if (atLeast(ctx.mv, '2.89')) {
    out.attachment_id = b.attachmentId;
    out.bdm_uuid = b.uuid;
  }
  return out;
}

/** BDMs the API lists: volume ones; from 2.89 only those with a Cinder attachment id. */
function listed(ctx: NovaCtx, s: Server): Bdm[] {
  return s.bdms.filter((b) => !atLeast(ctx.mv, '2.89') || b.attachmentId !== null);
}

function queryInt(ctx: NovaCtx, key: string): number | undefined {
  const raw = ctx.req.query.find(([k]) => k === key)?.[1];
  if (raw === undefined) return undefined;
  if (!/^[0-9]+$/.test(raw))
    throw new ApiError(
      400,
      `Invalid input for query parameters ${key}. Value: ${raw}. ${pyRepr(raw)} does not match '^[0-9]*$'`,
    );
  return Number(raw);
}

export function listAttachments(ctx: NovaCtx): NovaResult {
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, `${POLICY}:index`, 'reader');
  if (atLeast(ctx.mv, '2.75')) {
    const extra = [...new Set(ctx.req.query.map(([k]) => k).filter((k) => k !== 'limit' && k !== 'offset'))];
    if (extra.length > 0)
      throw new ApiError(
        400,
        `Additional properties are not allowed (${extra.map(pyRepr).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
      );
  }
  const limit = Math.min(queryInt(ctx, 'limit') ?? 1000, 1000);
  const offset = queryInt(ctx, 'offset') ?? 0;
  return {
    status: 200,
    body: {
      volumeAttachments: listed(ctx, s)
        .slice(offset, offset + limit)
        .map((b) => attachmentView(ctx, s, b)),
    },
  };
}

function bdmOf(s: Server, volumeId: string): Bdm {
  const b = s.bdms.find((x) => x.volumeId === volumeId);
  if (!b) throw new ApiError(404, `Instance ${s.id} is not attached to volume ${volumeId}`);
  return b;
}

export function showAttachment(ctx: NovaCtx): NovaResult {
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, `${POLICY}:show`, 'reader');
  const b = bdmOf(s, ctx.params.volumeId!);
  if (atLeast(ctx.mv, '2.89') && b.attachmentId === null)
    throw new ApiError(404, `Instance ${s.id} is not attached to volume ${b.volumeId}`);
  return { status: 200, body: { volumeAttachment: attachmentView(ctx, s, b) } };
}

/** The volume through Cinder, as the caller (404 `Volume <id> could not be found.`). */
function cinderVolume(ctx: NovaCtx, id: string): Volume {
  const v = ctx.state.volumes.get(id);
  if (!v || (!ctx.auth.isAdmin && v.projectId !== ctx.auth.projectId))
    throw new ApiError(404, `Volume ${id} could not be found.`);
  return v;
}

function checkShelved(ctx: NovaCtx, s: Server, action: string): void {
  if ((s.vmState === 'shelved' || s.vmState === 'shelved_offloaded') && !atLeast(ctx.mv, '2.20'))
    throw invalidState(action, s);
}

export function createAttachment(ctx: NovaCtx): NovaResult {
  const allowed = ['volumeId', 'device'];
  if (atLeast(ctx.mv, '2.49')) allowed.push('tag');
  if (atLeast(ctx.mv, '2.79')) allowed.push('delete_on_termination');
  const body = attachmentBody(ctx, allowed);
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, `${POLICY}:create`, 'member');
  const tag = typeof body.tag === 'string' ? body.tag : null;
  const dot =
    body.delete_on_termination === undefined ? false : novaBool('delete_on_termination', body.delete_on_termination);
  checkShelved(ctx, s, 'attach_volume');
  if (s.vmState === 'shelved_offloaded' && tag !== null)
    throw new ApiError(400, 'Tagged volume attachment is not supported for shelved-offloaded instances.');
  if (s.locked && !ctx.auth.isAdmin) throw new ApiError(409, `Instance ${s.id} is locked`);
  if (!ATTACH_STATES.includes(s.vmState)) throw invalidState('attach_volume', s);
  const v = cinderVolume(ctx, body.volumeId as string);
  const multi = ctx.state.isMultiattach(v);
  if (multi && !atLeast(ctx.mv, '2.60'))
    throw new ApiError(400, 'Multiattach volumes are only supported starting with compute API version 2.60.');
  const holders = [...ctx.state.servers.values()].filter((x) => x.bdms.some((b) => b.volumeId === v.id));
  if (holders.length > 0 && !multi)
    throw new ApiError(
      400,
      `Invalid volume: volume ${v.id} is already attached to instances: ${holders.map((x) => x.id).join(' ')}`,
    );
  if (holders.includes(s)) throw new ApiError(400, `Invalid volume: volume ${v.id} already attached`);
  const device = typeof body.device === 'string' ? body.device : null;
  const b = attachVolume(
    ctx.state,
    s,
    v,
    { device, tag, deleteOnTermination: dot },
    { isService: true, requestId: ctx.req.requestId },
    actionCaller(ctx, s),
  );
  if (atLeast(ctx.mv, '2.101')) return { status: 202 };
  const out: Record<string, unknown> = { id: v.id, serverId: s.id, volumeId: v.id, device: b.deviceName };
  if (atLeast(ctx.mv, '2.70')) out.tag = tag;
  if (atLeast(ctx.mv, '2.79')) out.delete_on_termination = dot;
  return { status: 200, body: { volumeAttachment: out } };
}

function swap(ctx: NovaCtx, s: Server, oldId: string, newId: string): void {
  if (s.locked && !ctx.auth.isAdmin) throw new ApiError(409, `Instance ${s.id} is locked`);
  if (!SWAP_STATES.includes(s.vmState)) throw invalidState('swap_volume', s);
  const oldV = cinderVolume(ctx, oldId);
  const newV = cinderVolume(ctx, newId);
  const b = s.bdms.find((x) => x.volumeId === oldId);
  if (!b || !oldV.attachments.some((a) => a.instanceUuid === s.id && a.attachStatus === 'attached'))
    throw new ApiError(400, 'Invalid volume: Old volume is attached to a different instance.');
  if (newV.attachments.some((a) => a.attachStatus === 'attached'))
    throw new ApiError(400, 'Invalid volume: New volume must be detached in order to swap.');
  if (newV.size < oldV.size) throw new ApiError(400, 'Invalid volume: New volume must be the same size or larger.');
  viaCinder(ctx.req.requestId, () => beginDetaching(ctx.state, oldV));
  scheduleSwap(ctx.state, s, b, oldV, newV, { isService: true, requestId: ctx.req.requestId }, actionCaller(ctx, s));
}

export function updateAttachment(ctx: NovaCtx): NovaResult {
  const onlySwap = !atLeast(ctx.mv, '2.85');
  const allowed = onlySwap ? ['volumeId'] : ['volumeId', 'device', 'tag', 'delete_on_termination', 'serverId', 'id'];
  if (!onlySwap && atLeast(ctx.mv, '2.89')) allowed.push('attachment_id', 'bdm_uuid');
  const body = attachmentBody(ctx, allowed);
  const s = getInstance(ctx, ctx.params.id!);
  const pathId = ctx.params.volumeId!;
  const newId = body.volumeId as string;
  if (onlySwap || newId !== pathId) can(ctx, `${POLICY}:swap`, 'admin');
  else can(ctx, `${POLICY}:update`, 'member');
  if (!onlySwap) {
    const b = bdmOf(s, pathId);
    if ('id' in body && body.id !== pathId) throw new ApiError(400, 'The id property is not mutable');
    if ('serverId' in body && body.serverId !== s.id) throw new ApiError(400, 'The serverId property is not mutable');
    if ('device' in body && body.device !== b.deviceName) throw new ApiError(400, 'The device property is not mutable');
    if ('tag' in body && body.tag !== b.tag) throw new ApiError(400, 'The tag property is not mutable');
    if ('delete_on_termination' in body)
      b.deleteOnTermination = novaBool('delete_on_termination', body.delete_on_termination);
  }
  if (onlySwap || newId !== pathId) swap(ctx, s, pathId, newId);
  return { status: 202 };
}

export function deleteAttachment(ctx: NovaCtx): NovaResult {
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, `${POLICY}:delete`, 'member');
  checkShelved(ctx, s, 'detach_volume');
  const v = cinderVolume(ctx, ctx.params.volumeId!);
  const b = bdmOf(s, v.id);
  if (b.bootIndex === 0) throw new ApiError(400, 'Cannot detach a root device volume');
  if (s.locked && !ctx.auth.isAdmin) throw new ApiError(409, `Instance ${s.id} is locked`);
  if (!ATTACH_STATES.includes(s.vmState)) throw invalidState('detach_volume', s);
  try {
    viaCinder(ctx.req.requestId, () => beginDetaching(ctx.state, v));
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) throw new ApiError(400, `Invalid volume: ${e.message}`);
    throw e;
  }
  scheduleDetach(ctx.state, s, b, v, actionCaller(ctx, s));
  return { status: 202 };
}
