/**
 * The one cloud the three services share: Keystone's identities and tokens, Cinder's volumes,
 * snapshots, attachments and messages, Nova's servers and block device mappings, plus the
 * delays, timers and injected faults that drive the asynchronous transitions.
 */
import { nowMicros } from './clock';
import { FaultPlan } from './faults';
import { hexId, uuid } from './ids';
import type {
  ApplicationCredential,
  Attachment,
  Project,
  Role,
  Server,
  Snapshot,
  Token,
  User,
  UserMessage,
  Volume,
  VolumeType,
} from './model';
import { DEFAULT_DELAYS, type Delays, type ResolvedOptions } from './options';
import { Timers } from './timers';
import type { QuotaLimits } from './cinder/quota';
import { InstanceActionStore } from './nova/instance-actions';

/** A seeding/control call named something that does not exist. */
export class NotFoundError extends Error {}

/** Base URLs (scheme://host:port) of the three listening services. */
export interface ServiceUrls {
  keystone: string;
  cinder: string;
  nova: string;
}

export class SimState {
  readonly delays: Delays;
  readonly timers = new Timers();
  readonly faults = new FaultPlan();
  readonly projects = new Map<string, Project>();
  readonly users = new Map<string, User>();
  readonly appCreds = new Map<string, ApplicationCredential>();
  readonly tokens = new Map<string, Token>();
  /** Keystone role ids, fixed for the simulator's lifetime. */
  readonly roleIds: Record<Role, string> = { admin: hexId(), member: hexId(), reader: hexId(), service: hexId() };
  /** Ids of catalog services and endpoints, fixed for the simulator's lifetime. */
  readonly catalogIds = new Map<string, string>();
  readonly volumeTypes = new Map<string, VolumeType>();
  readonly volumes = new Map<string, Volume>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly messages = new Map<string, UserMessage>();
  readonly servers = new Map<string, Server>();
  /** Nova's instance actions and events, kept after a server is deleted. */
  readonly instanceActions = new InstanceActionStore();
  /** cinder-volume service uuid per backend (`service_uuid` ≥ 3.48). */
  readonly serviceUuids = new Map<string, string>();
  readonly defaultTypeId: string;
  /** Enforced Cinder quotas per project id (`setQuota`); a project without an entry is unlimited. */
  readonly quotas = new Map<string, QuotaLimits>();
  urls: ServiceUrls = { keystone: '', cinder: '', nova: '' };

  constructor(
    readonly opts: ResolvedOptions,
    delays: Partial<Delays> = {},
  ) {
    this.delays = { ...DEFAULT_DELAYS, ...delays };
    for (const pool of opts.pools) this.serviceUuids.set(backendOf(pool), uuid());
    const def: VolumeType = {
      id: uuid(),
      name: '__DEFAULT__',
      description: 'Default Volume Type',
      isPublic: true,
      extraSpecs: {},
    };
    this.volumeTypes.set(def.id, def);
    this.defaultTypeId = def.id;
  }

  catalogId(key: string): string {
    let id = this.catalogIds.get(key);
    if (id === undefined) {
      id = hexId();
      this.catalogIds.set(key, id);
    }
    return id;
  }

  /** A project by id or name. */
  findProject(ref: string): Project | undefined {
    return this.projects.get(ref) ?? [...this.projects.values()].find((p) => p.name === ref);
  }

  requireProject(ref: string): Project {
    const p = this.findProject(ref);
    if (!p) throw new NotFoundError(`project ${ref} not found`);
    return p;
  }

  /** A user by id, or by name (within a domain when given). */
  findUser(ref: string, domainId?: string): User | undefined {
    return (
      this.users.get(ref) ??
      [...this.users.values()].find((u) => u.name === ref && (domainId === undefined || u.domainId === domainId))
    );
  }

  requireUser(ref: string): User {
    const u = this.findUser(ref);
    if (!u) throw new NotFoundError(`user ${ref} not found`);
    return u;
  }

  requireVolume(id: string): Volume {
    const v = this.volumes.get(id);
    if (!v) throw new NotFoundError(`volume ${id} not found`);
    return v;
  }

  requireServer(id: string): Server {
    const s = this.servers.get(id);
    if (!s) throw new NotFoundError(`server ${id} not found`);
    return s;
  }

  /** A volume type by id or name. */
  findType(ref: string): VolumeType | undefined {
    return this.volumeTypes.get(ref) ?? [...this.volumeTypes.values()].find((t) => t.name === ref);
  }

  typeOf(v: Volume): VolumeType | undefined {
    return this.volumeTypes.get(v.volumeTypeId);
  }

  isMultiattachType(t: VolumeType | undefined): boolean {
    return t !== undefined && /^<is>\s*true$/i.test(t.extraSpecs.multiattach ?? '');
  }

  isMultiattach(v: Volume): boolean {
    return this.isMultiattachType(this.typeOf(v));
  }

  findAttachment(id: string): { volume: Volume; attachment: Attachment } | undefined {
    for (const volume of this.volumes.values()) {
      const attachment = volume.attachments.find((a) => a.id === id);
      if (attachment) return { volume, attachment };
    }
    return undefined;
  }

  snapshotsOf(volumeId: string): Snapshot[] {
    return [...this.snapshots.values()].filter((s) => s.volumeId === volumeId);
  }

  /** Marks a volume changed (Cinder bumps updated_at on every save). */
  touch(v: { updatedAt: number | null }): void {
    v.updatedAt = nowMicros();
  }

  close(): void {
    this.timers.close();
  }
}

/** `host@backend#pool` → `host@backend`. */
export function backendOf(pool: string): string {
  const i = pool.indexOf('#');
  return i < 0 ? pool : pool.slice(0, i);
}
