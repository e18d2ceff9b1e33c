/**
 * Nova servers, as much as the gateway needs (nova-26/00): GET /servers, /servers/detail,
 * /servers/{id} with the recorded key order per microversion, and DELETE (204, volumes detached
 * after `serverDeleteMs`, delete_on_termination volumes deleted; a `delete` instance action whose
 * `compute_terminate_instance` event ends when the server is gone, nova-26/06).
 */
import { createHash } from 'node:crypto';
import { novaTime, novaUsageTime } from '../clock';
import { ApiError } from '../http/fault';
import { atLeast, type Version } from '../http/microversion';
import type { Server } from '../model';
import type { SimState } from '../state';
import { removeAttachment } from '../cinder/attach-core';
import { deleteVolume } from '../cinder/volume-ops';
import { actionCaller, can, getInstance, type NovaCtx, type NovaResult } from './context';
import type { ActionEventHandle } from './instance-actions';

const STATUS: Record<string, string> = {
  active: 'ACTIVE',
  building: 'BUILD',
  stopped: 'SHUTOFF',
  paused: 'PAUSED',
  suspended: 'SUSPENDED',
  shelved: 'SHELVED',
  shelved_offloaded: 'SHELVED_OFFLOADED',
  error: 'ERROR',
  deleted: 'DELETED',
  soft_deleted: 'SOFT_DELETED',
  resized: 'VERIFY_RESIZE',
  rescued: 'RESCUE',
};

/** power_state per vm_state (RUNNING=1, PAUSED=3, SHUTDOWN=4, SUSPENDED=7, NOSTATE=0). */
export const POWER: Record<string, number> = {
  active: 1,
  paused: 3,
  stopped: 4,
  suspended: 7,
  shelved: 4,
  shelved_offloaded: 0,
  building: 0,
  error: 0,
  resized: 1,
  rescued: 1,
  soft_deleted: 4,
};

export function serverStatus(s: Server): string {
  return STATUS[s.vmState] ?? s.vmState.toUpperCase();
}

/** `hostId`: sha224(project_id + host), as Nova computes it. */
export function hostIdOf(projectId: string, host: string): string {
  return createHash('sha224')
    .update(projectId + host)
    .digest('hex');
}

function links(base: string, id: string): unknown[] {
  return [
    { rel: 'self', href: `${base}/v2.1/servers/${id}` },
    { rel: 'bookmark', href: `${base}/servers/${id}` },
  ];
}

export function serverView(s: Server, mv: Version, base: string): Record<string, unknown> {
  const flavor = atLeast(mv, '2.47')
    ? { vcpus: 1, ram: 512, disk: 1, ephemeral: 0, swap: 0, original_name: 'm1.tiny', extra_specs: {} }
    : { id: '1', links: [{ rel: 'bookmark', href: `${base}/flavors/1` }] };
  const out: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status: serverStatus(s),
    tenant_id: s.projectId,
    user_id: s.userId,
    metadata: { ...s.metadata },
    hostId: s.hostId,
    image:
      s.imageId === null ? '' : { id: s.imageId, links: [{ rel: 'bookmark', href: `${base}/images/${s.imageId}` }] },
    flavor,
    created: novaTime(s.createdAt),
    updated: novaTime(s.updatedAt),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: links(base, s.id),
    'OS-DCF:diskConfig': 'MANUAL',
    progress: 0,
    'OS-EXT-AZ:availability_zone': s.availabilityZone,
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': novaUsageTime(s.launchedAt),
    'OS-SRV-USG:terminated_at': null,
    'OS-EXT-STS:task_state': s.taskState,
    'OS-EXT-STS:vm_state': s.vmState,
    'OS-EXT-STS:power_state': s.powerState,
    'os-extended-volumes:volumes_attached': s.bdms.map((b) =>
      atLeast(mv, '2.3') ? { id: b.volumeId, delete_on_termination: b.deleteOnTermination } : { id: b.volumeId },
    ),
  };
  if (atLeast(mv, '2.9')) out.locked = s.locked;
  if (atLeast(mv, '2.73')) out.locked_reason = null;
  if (atLeast(mv, '2.19')) out.description = null;
  if (atLeast(mv, '2.26')) out.tags = [];
  if (atLeast(mv, '2.63')) out.trusted_image_certificates = null;
  if (atLeast(mv, '2.71')) out.server_groups = [];
  return out;
}

function q(ctx: NovaCtx, key: string): string | undefined {
  return ctx.req.query.find(([k]) => k === key)?.[1];
}

export function listServers(ctx: NovaCtx, detail: boolean): NovaResult {
  can(ctx, detail ? 'os_compute_api:servers:detail' : 'os_compute_api:servers:index', 'reader');
  const all = ctx.auth.isAdmin && ['1', 'true', 'True'].includes(q(ctx, 'all_tenants') ?? '');
  let servers = [...ctx.state.servers.values()]
    .filter((s) => all || s.projectId === ctx.auth.projectId)
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const name = q(ctx, 'name');
  if (name !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(name);
    } catch {
      re = new RegExp(name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    }
    servers = servers.filter((s) => re.test(s.name));
  }
  const status = q(ctx, 'status');
  if (status !== undefined) servers = servers.filter((s) => serverStatus(s) === status.toUpperCase());
  const marker = q(ctx, 'marker');
  if (marker !== undefined) {
    const i = servers.findIndex((s) => s.id === marker);
    if (i < 0) throw new ApiError(400, `marker [${marker}] not found`);
    servers = servers.slice(i + 1);
  }
  const limitRaw = q(ctx, 'limit');
  const limit = limitRaw === undefined ? 1000 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 0)
    throw new ApiError(
      400,
      `Invalid input for query parameters limit. Value: ${limitRaw}. '${limitRaw}' does not match '^[0-9]*$'`,
    );
  const page = servers.slice(0, limit);
  const body: Record<string, unknown> = {
    servers: page.map((s) =>
      detail ? serverView(s, ctx.mv, ctx.req.base) : { id: s.id, name: s.name, links: links(ctx.req.base, s.id) },
    ),
  };
  const last = page[page.length - 1];
  if (limitRaw !== undefined && last && page.length === limit) {
    const params = ctx.req.query
      .filter(([k]) => k !== 'marker')
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    params.push(`marker=${last.id}`);
    body.servers_links = [
      { rel: 'next', href: `${ctx.req.base}/v2.1/servers${detail ? '/detail' : ''}?${params.join('&')}` },
    ];
  }
  return { status: 200, body };
}

export function showServer(ctx: NovaCtx): NovaResult {
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, 'os_compute_api:servers:show', 'reader');
  return { status: 200, body: { server: serverView(s, ctx.mv, ctx.req.base) } };
}

export function deleteServer(ctx: NovaCtx): NovaResult {
  const s = getInstance(ctx, ctx.params.id!);
  can(ctx, 'os_compute_api:servers:delete', 'member');
  if (s.locked && !ctx.auth.isAdmin) throw new ApiError(409, `Instance ${s.id} is locked`);
  // A server already deleting is ignored (no second action); a shelved-offloaded one is deleted
  // locally by nova-api, so its action gets no compute event.
  if (s.taskState === 'deleting') return { status: 204 };
  const action = ctx.state.instanceActions.start(s, 'delete', actionCaller(ctx, s));
  const ev =
    s.vmState === 'shelved_offloaded'
      ? undefined
      : ctx.state.instanceActions.startEvent(action, 'compute_terminate_instance', ctx.state.opts.computeHost);
  s.taskState = 'deleting';
  destroyLater(ctx.state, s, ev);
  return { status: 204 };
}

/** Terminates a server after serverDeleteMs: its attachments go, delete_on_termination volumes too. */
export function destroyLater(state: SimState, s: Server, ev?: ActionEventHandle): void {
  state.timers.after(state.delays.serverDeleteMs, () => {
    if (state.servers.get(s.id) !== s) return;
    for (const b of s.bdms) {
      const v = state.volumes.get(b.volumeId);
      const a = v?.attachments.find(
        (x) => x.id === b.attachmentId || (b.attachmentId === null && x.instanceUuid === s.id),
      );
      if (v && a) removeAttachment(state, v, a);
      if (v && b.deleteOnTermination) {
        try {
          deleteVolume(state, v, {});
        } catch {
          // Nova logs and leaves the volume when Cinder refuses.
        }
      }
    }
    state.servers.delete(s.id);
    if (ev) state.instanceActions.finishEvent(ev);
    state.instanceActions.markDeleted(s.id);
  });
}
