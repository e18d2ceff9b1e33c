/**
 * The memory backend's data file: its JSON shape and the one check it gets when read. Everything
 * the backend holds comes from here (or from the seed generator, which writes the same shape), so
 * a file written back reads back the same.
 */
import { ConfigError } from '../../contract/settings';

/** One attachment of a volume to a host. */
export interface AttachmentData {
  /** The attachment's id (also the consumer id, as Cinder's host attachments have it). */
  id: string;
  /** The host the volume is attached to. */
  host: string;
  /** @default false */
  readOnly?: boolean;
  /** Device path on the host. @default null */
  device?: string | null;
  /** RFC 3339. @default null */
  attachedAt?: string | null;
  /** An attachment an operation is making or ending. @default 'ATTACHED' */
  state?: 'ATTACHING' | 'ATTACHED' | 'DETACHING' | 'ERROR';
  /**
   * The workload holding the volume through this attachment (a claim, as a scheduler's allocation
   * holds a CSI volume): an id in `workloads`, or one no longer there (garbage-collected). @default
   * none: the host itself holds it
   */
  workload?: string;
}

/** Statuses a volume holds while an operation runs on it (or after one failed); otherwise derived. */
export type HeldStatus = 'CREATING' | 'DELETING' | 'EXTENDING' | 'ATTACHING' | 'DETACHING' | 'ERROR';

/** One volume. */
export interface VolumeData {
  namespace: string;
  id: string;
  name: string;
  sizeBytes: number;
  /** Absent: AVAILABLE, or IN_USE while attached. */
  status?: HeldStatus;
  description?: string | null;
  metadata?: Record<string, string>;
  createdAt?: string | null;
  updatedAt?: string | null;
  attachments?: AttachmentData[];
}

/** One snapshot of a volume (same namespace). */
export interface SnapshotData {
  namespace: string;
  id: string;
  volumeId: string;
  name: string | null;
  sizeBytes: number;
  description?: string | null;
  createdAt?: string | null;
  /** @default true */
  ready?: boolean;
}

/** What a credential may do in one namespace (`*`: every namespace). */
export interface GrantData {
  namespace: string;
  /** Create, change and delete as well as read. @default false */
  write?: boolean;
}

/** What a workload (a scheduler's allocation) is doing, as Nomad's allocation client statuses say it. */
export type WorkloadStatus = 'pending' | 'running' | 'complete' | 'failed' | 'lost';

/** A workload that may hold volumes through attachments (`AttachmentData.workload`). */
export interface WorkloadData {
  id: string;
  /** Its own status; `complete`, `failed` and `lost` are terminal. */
  status: WorkloadStatus;
  /** What the scheduler wants of it. @default 'run' */
  desiredStatus?: 'run' | 'stop' | 'evict';
  /** RFC 3339: when it took its status. @default null (unknown) */
  updatedAt?: string | null;
}

/** A host's instance of the storage plugin: running and healthy, running but failing, or not running. */
export type HostPluginState = 'healthy' | 'unhealthy' | 'missing';

/**
 * A host the backend knows (the compute side: hosts as a compute service lists its servers).
 * When `hosts` is declared, an attachment to a host it does not list is one to a host that is gone.
 */
export interface HostData {
  /** As attachments name it (`AttachmentData.host`). */
  name: string;
  /**
   * The volumes the host has attached, as `namespace/id` (its own record, apart from the volumes'
   * attachments; attach and detach keep both). @default none: the host does not report them
   */
  volumes?: string[];
  /** Its instance of the storage plugin, which publishes and unpublishes volumes there. @default 'healthy' */
  plugin?: HostPluginState;
}

/** The storage plugin behind the volumes: whether it needs a controller, and how many are healthy. */
export interface StoragePluginData {
  /** @default 'memory' */
  id?: string;
  /** Volumes need a controller to publish and unpublish. @default false */
  controllerRequired?: boolean;
  /** Controller instances expected. @default 1 when a controller is required, else 0 */
  controllersExpected?: number;
  /** Controller instances healthy. @default controllersExpected */
  controllersHealthy?: number;
}

/** A token callers send in the backend's credential header, and what it holds. */
export interface TokenData {
  /** The secret callers send. Never logged or returned. */
  token: string;
  /** For humans (logs never show the token, they may show this). */
  name?: string;
  grants: GrantData[];
  /** Sees every namespace and may do everything. @default false */
  admin?: boolean;
  /** RFC 3339; after it the token is refused as expired. @default never */
  expiresAt?: string | null;
}

/** The whole data set. */
export interface MemoryData {
  volumes: VolumeData[];
  snapshots?: SnapshotData[];
  /**
   * The tokens the backend knows. None declared: every caller may do everything (like a Nomad
   * cluster with ACLs off). Declared: a call without a token gets `anonymous`'s grants, or
   * UNAUTHENTICATED when there are none.
   */
  tokens?: TokenData[];
  /** Grants of a call without a token, when `tokens` are declared. @default none */
  anonymous?: GrantData[];
  /** Workloads that attachments name (`AttachmentData.workload`). @default none */
  workloads?: WorkloadData[];
  /** The hosts the backend knows. @default not declared: nothing is known of hosts beyond the attachments */
  hosts?: HostData[];
  /** The storage plugin. @default one that needs no controller, healthy on every host */
  storagePlugin?: StoragePluginData;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function need(cond: boolean, where: string, message: string): asserts cond {
  if (!cond) throw new ConfigError(where, message);
}

const isId = (v: unknown): v is string =>
  typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(v) && !v.includes('..');
const isTime = (v: unknown): boolean =>
  v === undefined || v === null || (typeof v === 'string' && !Number.isNaN(Date.parse(v)));
const isBytes = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function checkGrants(grants: unknown, where: string): void {
  need(Array.isArray(grants), where, 'must be a list of { "namespace": …, "write": … }');
  (grants as unknown[]).forEach((g, i) => {
    need(
      isObject(g) && (g.namespace === '*' || isId(g.namespace)),
      `${where}[${i}].namespace`,
      'must be a namespace id or "*"',
    );
    need(g.write === undefined || typeof g.write === 'boolean', `${where}[${i}].write`, 'must be true or false');
  });
}

function checkVolume(o: unknown, where: string, seen: Set<string>): void {
  need(isObject(o), where, 'must be an object');
  need(isId(o.namespace), `${where}.namespace`, 'must be an id (letters, digits, ".", "_", "-")');
  need(isId(o.id), `${where}.id`, 'must be an id (letters, digits, ".", "_", "-")');
  need(!seen.has(`${o.namespace}/${o.id}`), `${where}.id`, `repeats volume ${o.namespace}/${o.id}`);
  seen.add(`${o.namespace}/${o.id}`);
  need(typeof o.name === 'string', `${where}.name`, 'must be a string');
  need(isBytes(o.sizeBytes), `${where}.sizeBytes`, 'must be a whole number of bytes');
  need(
    o.status === undefined ||
      ['CREATING', 'DELETING', 'EXTENDING', 'ATTACHING', 'DETACHING', 'ERROR'].includes(o.status as string),
    `${where}.status`,
    'must be CREATING, DELETING, EXTENDING, ATTACHING, DETACHING or ERROR (or absent)',
  );
  need(
    o.metadata === undefined || (isObject(o.metadata) && Object.values(o.metadata).every((x) => typeof x === 'string')),
    `${where}.metadata`,
    'must map strings to strings',
  );
  need(isTime(o.createdAt) && isTime(o.updatedAt), `${where}.createdAt`, 'times must be RFC 3339');
  need(o.attachments === undefined || Array.isArray(o.attachments), `${where}.attachments`, 'must be a list');
  ((o.attachments as unknown[] | undefined) ?? []).forEach((a, i) => {
    const at = `${where}.attachments[${i}]`;
    need(isObject(a) && isId(a.id), `${at}.id`, 'must be an id');
    need(typeof a.host === 'string', `${at}.host`, 'must be a string');
    need(a.workload === undefined || isId(a.workload), `${at}.workload`, 'must be a workload id');
  });
}

const WORKLOAD_STATUSES = ['pending', 'running', 'complete', 'failed', 'lost'];
const isCount = (v: unknown): boolean => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0);

/** Workloads, hosts and the storage plugin: the state the doctor's checks read beside the volumes. */
function checkWorld(d: Record<string, unknown>, where: string): void {
  need(d.workloads === undefined || Array.isArray(d.workloads), `${where}: workloads`, 'must be a list');
  ((d.workloads as unknown[] | undefined) ?? []).forEach((w, i) => {
    const at = `${where}: workloads[${i}]`;
    need(isObject(w) && isId(w.id), `${at}.id`, 'must be an id');
    need(
      WORKLOAD_STATUSES.includes(w.status as string),
      `${at}.status`,
      `must be one of ${WORKLOAD_STATUSES.join(', ')}`,
    );
    need(
      w.desiredStatus === undefined || ['run', 'stop', 'evict'].includes(w.desiredStatus as string),
      `${at}.desiredStatus`,
      'must be run, stop or evict',
    );
    need(isTime(w.updatedAt), `${at}.updatedAt`, 'must be RFC 3339');
  });
  need(d.hosts === undefined || Array.isArray(d.hosts), `${where}: hosts`, 'must be a list');
  ((d.hosts as unknown[] | undefined) ?? []).forEach((h, i) => {
    const at = `${where}: hosts[${i}]`;
    need(isObject(h) && typeof h.name === 'string' && h.name.length > 0, `${at}.name`, 'must be a host name');
    need(
      h.volumes === undefined ||
        (Array.isArray(h.volumes) &&
          h.volumes.every((k) => typeof k === 'string' && k.split('/').length === 2 && k.split('/').every(isId))),
      `${at}.volumes`,
      'must be a list of "namespace/id"',
    );
    need(
      h.plugin === undefined || ['healthy', 'unhealthy', 'missing'].includes(h.plugin as string),
      `${at}.plugin`,
      'must be healthy, unhealthy or missing',
    );
  });
  const p = d.storagePlugin;
  need(p === undefined || isObject(p), `${where}: storagePlugin`, 'must be an object');
  if (p === undefined) return;
  need(p.id === undefined || isId(p.id), `${where}: storagePlugin.id`, 'must be an id');
  need(
    p.controllerRequired === undefined || typeof p.controllerRequired === 'boolean',
    `${where}: storagePlugin.controllerRequired`,
    'must be true or false',
  );
  need(
    isCount(p.controllersExpected) && isCount(p.controllersHealthy),
    `${where}: storagePlugin.controllersHealthy`,
    'controller counts must be whole numbers, 0 or more',
  );
}

/**
 * Checks parsed JSON as a data set; returns it typed.
 * @throws ConfigError naming the first bad value (`where` is the file or setting)
 */
export function checkData(d: unknown, where: string): MemoryData {
  need(isObject(d), where, 'must be a JSON object with "volumes"');
  need(Array.isArray(d.volumes), `${where}: volumes`, 'must be a list');
  const seen = new Set<string>();
  (d.volumes as unknown[]).forEach((v, i) => checkVolume(v, `${where}: volumes[${i}]`, seen));
  need(d.snapshots === undefined || Array.isArray(d.snapshots), `${where}: snapshots`, 'must be a list');
  ((d.snapshots as unknown[] | undefined) ?? []).forEach((s, i) => {
    need(
      isObject(s) && isId(s.namespace) && isId(s.id) && isId(s.volumeId),
      `${where}: snapshots[${i}]`,
      'needs namespace, id and volumeId',
    );
    need(isBytes(s.sizeBytes), `${where}: snapshots[${i}].sizeBytes`, 'must be a whole number of bytes');
  });
  need(d.tokens === undefined || Array.isArray(d.tokens), `${where}: tokens`, 'must be a list');
  ((d.tokens as unknown[] | undefined) ?? []).forEach((t, i) => {
    need(
      isObject(t) && typeof t.token === 'string' && t.token.length > 0,
      `${where}: tokens[${i}].token`,
      'must be a non-empty string',
    );
    need(isTime(t.expiresAt), `${where}: tokens[${i}].expiresAt`, 'must be RFC 3339');
    checkGrants(t.grants, `${where}: tokens[${i}].grants`);
  });
  if (d.anonymous !== undefined) checkGrants(d.anonymous, `${where}: anonymous`);
  checkWorld(d, where);
  return d as unknown as MemoryData;
}
