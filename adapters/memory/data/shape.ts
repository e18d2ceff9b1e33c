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
  });
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
  return d as unknown as MemoryData;
}
