/**
 * The smaller Cinder resources: version documents, volume types, user messages (≥ 3.3),
 * limits, os-services and os-availability-zone (shapes from cinder-21/00, 12).
 */
import { cinderTime, nowMicros } from '../clock';
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import { uuid } from '../ids';
import type { UserMessage, VolumeType } from '../model';
import { backendOf, type SimState } from '../state';
import { ok, type CinderCtx, type CinderResult } from './context';
import { listBody, listItems, type ListSpec } from './list-query';
import { canSee } from './lookup';
import { authorize } from './policy';
import { metadataValue, requireElement, requireProperty, stringOrNull } from './validation';
import { messageView, volumeTypeView } from './views';

/** The body of `GET /` (300) and `GET /v3/` (200). */
export function versionsBody(state: SimState, base: string): unknown {
  return {
    versions: [
      {
        id: 'v3.0',
        status: 'CURRENT',
        version: state.opts.cinderMaxVersion,
        min_version: '3.0',
        updated: '2022-08-31T00:00:00Z',
        links: [
          { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
          { rel: 'self', href: `${base}/v3/` },
        ],
        'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
      },
    ],
  };
}

function findVisibleType(ctx: CinderCtx, ref: string): VolumeType {
  const t = ctx.state.findType(ref);
  if (!t || (!t.isPublic && !ctx.auth.isAdmin)) throw new ApiError(404, `Volume type ${ref} could not be found.`);
  return t;
}

export function listTypes(ctx: CinderCtx): CinderResult {
  const types = [...ctx.state.volumeTypes.values()].filter((t) => t.isPublic || ctx.auth.isAdmin);
  return ok(200, { volume_types: types.map((t) => volumeTypeView(t, ctx.auth.isAdmin)) });
}

export function showType(ctx: CinderCtx): CinderResult {
  return ok(200, { volume_type: volumeTypeView(findVisibleType(ctx, ctx.params.id!), ctx.auth.isAdmin) });
}

/** Adds a volume type (also the seeding path). */
export function insertType(
  state: SimState,
  spec: {
    name: string;
    description?: string | null;
    extraSpecs?: Record<string, string>;
    isPublic?: boolean;
    id?: string;
  },
): VolumeType {
  if (state.findType(spec.name)?.name === spec.name)
    throw new ApiError(409, `Volume Type ${spec.name} already exists.`);
  const t: VolumeType = {
    id: spec.id ?? uuid(),
    name: spec.name,
    description: spec.description ?? null,
    isPublic: spec.isPublic ?? true,
    extraSpecs: { ...(spec.extraSpecs ?? {}) },
  };
  state.volumeTypes.set(t.id, t);
  return t;
}

export function createType(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume_extension:types_manage', 'admin');
  const body = requireElement(ctx.body, 'volume_type');
  const name = stringOrNull('name', requireProperty('volume_type', body, 'name'));
  if (!name) throw new ApiError(400, 'Volume type name can not be empty.');
  const t = insertType(ctx.state, {
    name,
    description: stringOrNull('description', body.description),
    extraSpecs: body.extra_specs === undefined ? {} : metadataValue('extra_specs', body.extra_specs),
    isPublic: body['os-volume-type-access:is_public'] !== false && body.is_public !== false,
  });
  return ok(200, {
    volume_type: {
      id: t.id,
      name: t.name,
      is_public: t.isPublic,
      extra_specs: { ...t.extraSpecs },
      description: t.description,
      'os-volume-type-access:is_public': t.isPublic,
    },
  });
}

const MESSAGE_LIST: ListSpec<UserMessage> = {
  allowed: ['resource_uuid', 'resource_type', 'event_id', 'request_id', 'message_level'],
  fields: {
    id: (m) => m.id,
    resource_uuid: (m) => m.resourceUuid,
    resource_type: (m) => m.resourceType,
    event_id: (m) => m.eventId,
    request_id: (m) => m.requestId,
    message_level: (m) => m.messageLevel,
    created_at: (m) => m.createdAt,
  },
  countable: false,
  markerNotFound: (m) => `Message ${m} could not be found.`,
};

function liveMessages(ctx: CinderCtx): UserMessage[] {
  const now = nowMicros();
  return [...ctx.state.messages.values()].filter((m) => m.expiresAt > now && canSee(ctx, m.projectId));
}

export function listMessages(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'message:get_all', 'reader');
  const all = liveMessages(ctx);
  if (!atLeast(ctx.mv, '3.5')) {
    const mine = all.filter((m) => m.projectId === ctx.auth.projectId).sort((a, b) => b.createdAt - a.createdAt);
    return ok(200, { messages: mine.map((m) => messageView(m, ctx)) });
  }
  const r = listItems(ctx, all, MESSAGE_LIST, (m) => m.projectId === ctx.auth.projectId);
  return ok(
    200,
    listBody(ctx, 'messages', 'messages', r, (m) => messageView(m, ctx)),
  );
}

function getMessage(ctx: CinderCtx): UserMessage {
  const id = ctx.params.id!;
  const m = liveMessages(ctx).find((x) => x.id === id);
  if (!m) throw new ApiError(404, `Message ${id} could not be found.`);
  return m;
}

export function showMessage(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'message:get', 'reader');
  return ok(200, { message: messageView(getMessage(ctx), ctx) });
}

export function deleteMessage(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'message:delete', 'member');
  ctx.state.messages.delete(getMessage(ctx).id);
  return ok(204);
}

export function limits(ctx: CinderCtx): CinderResult {
  const pid = ctx.auth.projectId;
  const vols = [...ctx.state.volumes.values()].filter((v) => v.projectId === pid);
  const snaps = [...ctx.state.snapshots.values()].filter((s) => s.projectId === pid);
  const gigabytes = vols.reduce((n, v) => n + v.size, 0) + snaps.reduce((n, s) => n + s.size, 0);
  // Cinder's default quotas unless `setQuota` set (and so enforces) others.
  const q = ctx.state.quotas.get(pid ?? '') ?? {};
  return ok(200, {
    limits: {
      rate: [],
      absolute: {
        maxTotalVolumes: q.volumes ?? 10,
        maxTotalSnapshots: q.snapshots ?? 10,
        maxTotalVolumeGigabytes: q.gigabytes ?? 1000,
        maxTotalBackups: 10,
        maxTotalBackupGigabytes: 1000,
        totalVolumesUsed: vols.length,
        totalGigabytesUsed: gigabytes,
        totalSnapshotsUsed: snaps.length,
        totalBackupsUsed: 0,
        totalBackupGigabytesUsed: 0,
      },
    },
  });
}

export function services(ctx: CinderCtx): CinderResult {
  authorize(ctx.state, ctx.auth, 'volume_extension:services:index', 'admin');
  const now = cinderTime(nowMicros());
  const zone = ctx.state.opts.availabilityZones[0] ?? 'nova';
  const host = backendOf(ctx.state.opts.pools[0] ?? 'openstack-sim@fake').split('@')[0];
  const out: unknown[] = [
    { binary: 'cinder-scheduler', host, zone, status: 'enabled', state: 'up', updated_at: now, disabled_reason: null },
  ];
  for (const backend of new Set(ctx.state.opts.pools.map(backendOf))) {
    out.push({
      binary: 'cinder-volume',
      host: backend,
      zone,
      status: 'enabled',
      state: 'up',
      updated_at: now,
      disabled_reason: null,
      replication_status: 'disabled',
      active_backend_id: null,
      frozen: false,
    });
  }
  return ok(200, { services: out });
}

export function availabilityZones(ctx: CinderCtx): CinderResult {
  return ok(200, {
    availabilityZoneInfo: ctx.state.opts.availabilityZones.map((zoneName) => ({
      zoneName,
      zoneState: { available: true },
    })),
  });
}
