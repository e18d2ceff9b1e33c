/**
 * Seeding: put volumes, servers, attachments, snapshots, types and messages straight into the
 * shared state, in the shape the real flows would have left them (no delays), with the ids you
 * give. Names of projects/users may be used wherever an id is expected. Seeded servers and
 * attachments also leave the instance actions a real boot or attach would (`create`,
 * `attach_volume`, with their finished compute event; a `building` server's event still runs).
 */
import { nowMicros } from './clock';
import { completeAttachment, connectAttachment, reserveAttachment } from './cinder/attach-core';
import { Action, createMessage, Detail } from './cinder/messages';
import { insertType } from './cinder/misc';
import { insertSnapshot } from './cinder/snapshots';
import { insertVolume } from './cinder/volume-ops';
import { uuid } from './ids';
import type { Server } from './model';
import { POWER, hostIdOf } from './nova/servers';
import { NotFoundError, type SimState } from './state';

export interface SeedVolumeSpec {
  /** Project name or id. */
  project: string;
  name?: string | null;
  /** GiB. @default 1 */
  size?: number;
  /** @default 'available' (use attachNow for in-use volumes) */
  status?: string;
  /** Type name or id. @default '__DEFAULT__' (or the `multiattach` type when `multiattach`) */
  volume_type?: string;
  bootable?: boolean;
  /** Use (creating if needed) the volume type `multiattach` (`multiattach="<is> True"`). */
  multiattach?: boolean;
  metadata?: Record<string, string>;
  description?: string | null;
  availability_zone?: string;
  /** volume_image_metadata (e.g. `{image_id, image_name}`); implies nothing else. */
  image_metadata?: Record<string, string>;
  /** Owner (user name or id). @default the first user with a role on the project */
  user?: string;
  id?: string;
}

function ownerOf(state: SimState, projectId: string, user?: string): string {
  if (user !== undefined) return state.requireUser(user).id;
  const u = [...state.users.values()].find((x) => (x.roles.get(projectId)?.length ?? 0) > 0);
  return u?.id ?? projectId;
}

export function seedVolume(state: SimState, s: SeedVolumeSpec): string {
  const project = state.requireProject(s.project);
  let typeId: string | undefined;
  if (s.volume_type !== undefined) {
    const t = state.findType(s.volume_type);
    if (!t) throw new NotFoundError(`volume type ${s.volume_type} not found`);
    typeId = t.id;
  } else if (s.multiattach) {
    typeId = (
      state.findType('multiattach') ??
      insertType(state, { name: 'multiattach', extraSpecs: { multiattach: '<is> True' } })
    ).id;
  }
  if (s.multiattach && typeId !== undefined && !state.isMultiattachType(state.volumeTypes.get(typeId)))
    throw new Error(`volume type ${s.volume_type} is not multiattach`);
  const v = insertVolume(state, {
    projectId: project.id,
    userId: ownerOf(state, project.id, s.user),
    size: s.size ?? 1,
    name: s.name ?? null,
    description: s.description ?? null,
    metadata: s.metadata ?? {},
    bootable: s.bootable ?? false,
    imageMetadata: s.image_metadata ?? null,
    status: s.status ?? 'available',
    ...(typeId !== undefined ? { volumeTypeId: typeId } : {}),
    ...(s.availability_zone !== undefined ? { availabilityZone: s.availability_zone } : {}),
    ...(s.id !== undefined ? { id: s.id } : {}),
  });
  return v.id;
}

export interface SeedServerSpec {
  project: string;
  name: string;
  id?: string;
  /** Nova vm_state (`active`, `stopped`, `paused`, `shelved_offloaded`, `error`, …). @default 'active' */
  vm_state?: string;
  /** User name or id. @default the first user with a role on the project */
  user?: string;
  locked?: boolean;
  metadata?: Record<string, string>;
  /** Prefix of device names Nova picks. @default '/dev/sd' (nova-26's fake driver) */
  devicePrefix?: string;
  /** Boot-from-volume: this volume becomes the root disk (`<prefix>a`, boot_index 0). */
  rootVolumeId?: string;
  /** Image id (else `""`, as for boot-from-volume). */
  imageId?: string;
}

export function seedServer(state: SimState, s: SeedServerSpec): string {
  const project = state.requireProject(s.project);
  const now = nowMicros();
  const vmState = s.vm_state ?? 'active';
  const server: Server = {
    id: s.id ?? uuid(),
    projectId: project.id,
    userId: ownerOf(state, project.id, s.user),
    name: s.name,
    vmState,
    taskState: null,
    powerState: POWER[vmState] ?? 0,
    locked: s.locked ?? false,
    availabilityZone: state.opts.availabilityZones[0] ?? 'nova',
    hostId: hostIdOf(project.id, state.opts.computeHost),
    imageId: s.imageId ?? null,
    metadata: { ...(s.metadata ?? {}) },
    bdms: [],
    createdAt: now,
    updatedAt: now,
    launchedAt: vmState === 'building' ? null : now,
    devicePrefix: s.devicePrefix ?? '/dev/sd',
  };
  if (state.servers.has(server.id)) throw new Error(`server ${server.id} already exists`);
  state.servers.set(server.id, server);
  recordCreate(state, server);
  if (s.rootVolumeId !== undefined)
    attachNow(state, server.id, s.rootVolumeId, { device: `${server.devicePrefix}a`, bootIndex: 0 });
  return server.id;
}

/** The boot's `create` action and its `compute__do_build_and_run_instance` event (nova-26/05). */
function recordCreate(state: SimState, server: Server): void {
  const event = 'compute__do_build_and_run_instance';
  if (server.vmState !== 'building') {
    state.instanceActions.recordCompleted(server, 'create', event, state.opts.computeHost);
    return;
  }
  const action = state.instanceActions.start(server, 'create', {
    requestId: `req-${uuid()}`,
    userId: server.userId,
    projectId: server.projectId,
  });
  state.instanceActions.startEvent(action, event, state.opts.computeHost);
}

export interface AttachNowOptions {
  /** @default the next free `<prefix>b…` */
  device?: string;
  tag?: string;
  deleteOnTermination?: boolean;
  /** 0 makes it the root disk (Nova refuses to detach it). */
  bootIndex?: number;
}

/** What a completed Nova attach leaves: attachment `attached` with a connector, volume `in-use`, BDM. */
export function attachNow(state: SimState, serverId: string, volumeId: string, o: AttachNowOptions = {}): string {
  const server = state.requireServer(serverId);
  const v = state.requireVolume(volumeId);
  if (v.projectId !== server.projectId)
    throw new Error(`volume ${volumeId} and server ${serverId} are in different projects`);
  const used = new Set(server.bdms.map((b) => b.deviceName));
  let device = o.device;
  for (let c = 98; device === undefined && c <= 122; c++)
    if (!used.has(`${server.devicePrefix}${String.fromCharCode(c)}`))
      device = `${server.devicePrefix}${String.fromCharCode(c)}`;
  const requestId = `req-${uuid()}`;
  const a = reserveAttachment(state, v, server.id);
  connectAttachment(
    state,
    v,
    a,
    {
      platform: 'x86_64',
      os_type: 'linux',
      ip: '127.0.0.1',
      host: state.opts.computeHost,
      multipath: false,
      mountpoint: device ?? null,
    },
    { isService: true, requestId },
    false,
  );
  completeAttachment(state, v, a);
  server.bdms.push({
    uuid: uuid(),
    volumeId: v.id,
    attachmentId: a.id,
    deviceName: device ?? null,
    tag: o.tag ?? null,
    deleteOnTermination: o.deleteOnTermination ?? false,
    bootIndex: o.bootIndex ?? null,
    createdAt: nowMicros(),
  });
  // The root disk is part of the boot (`create`); any other volume was a completed attach_volume.
  if (o.bootIndex !== 0)
    state.instanceActions.recordCompleted(server, 'attach_volume', 'compute_attach_volume', state.opts.computeHost);
  return a.id;
}

export interface SeedSnapshotSpec {
  volumeId: string;
  name?: string | null;
  description?: string | null;
  /** @default 'available' */
  status?: string;
  metadata?: Record<string, string>;
  id?: string;
}

export function seedSnapshot(state: SimState, s: SeedSnapshotSpec): string {
  const v = state.requireVolume(s.volumeId);
  return insertSnapshot(state, v, {
    userId: v.userId,
    name: s.name ?? null,
    description: s.description ?? null,
    status: s.status ?? 'available',
    metadata: s.metadata ?? {},
    ...(s.id !== undefined ? { id: s.id } : {}),
  }).id;
}

export interface SeedMessageSpec {
  project: string;
  /** The volume the message is about. */
  volumeId?: string;
  /** @default 'EXTEND_VOLUME' */
  action?: keyof typeof Action;
  /** @default 'DRIVER_FAILED_EXTEND' */
  detail?: keyof typeof Detail;
  requestId?: string;
}

export function seedUserMessage(state: SimState, s: SeedMessageSpec): string {
  return createMessage(state, {
    projectId: state.requireProject(s.project).id,
    resourceUuid: s.volumeId ?? null,
    action: Action[s.action ?? 'EXTEND_VOLUME'],
    detail: Detail[s.detail ?? 'DRIVER_FAILED_EXTEND'],
    requestId: s.requestId ?? `req-${uuid()}`,
  }).id;
}

export interface VolumeTypeSpec {
  name: string;
  extraSpecs?: Record<string, string>;
  description?: string | null;
  isPublic?: boolean;
  id?: string;
}

export function addVolumeType(state: SimState, s: VolumeTypeSpec): string {
  return insertType(state, s).id;
}
