/**
 * What {@link WatcherLeases} is given and what it reports: its options with their defaults and
 * checks, the change and holder shapes, and its typed errors.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient } from '../redis-client';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';

/** Defaults of {@link WatcherLeasesOptions}; the gateway's `LIVE_LEASE_TTL_MS` takes its default from here. */
export const LEASE_DEFAULTS = Object.freeze({ ttlMs: 10_000 });
import { leaseClock, type LeaseClock } from './clock';

/** Why a lease was gained or lost (the `reason` of a {@link LeaseChange}). */
export type LeaseChangeReason =
  /** Gained: the key was free (or still held this replica's own earlier token). */
  | 'acquired'
  /** Lost: a renew found another replica's token in the key. */
  | 'taken'
  /** Lost: a renew found the key gone (expired, or Redis lost its data). */
  | 'gone'
  /** Lost: the local deadline passed before a renew succeeded (Redis slow or away, or this process paused). */
  | 'expired'
  /** Lost: `release()` gave it up. */
  | 'released';

/** What `onChange` is told besides the backend and whether the lease is now held. */
export interface LeaseChange {
  /** The fencing token gained, or the one that is no longer valid. */
  token: string;
  reason: LeaseChangeReason;
}

/** What failed, for `onError`. */
export type LeaseErrorOp = 'acquire' | 'renew' | 'release' | 'onChange';

/** Options of {@link WatcherLeases}. */
export interface WatcherLeasesOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. A command timeout on it bounds each step. */
  client: RedisClient;
  /** Prefix of every key; replicas sharing leases use the same one. @default 'vg:' ({@link DEFAULT_REDIS_KEY_PREFIX}) */
  keyPrefix?: string;
  /** This process's name in fencing tokens and `holders()`; unique per process. @default `<hostname>-<pid>-<8 random hex>` */
  replicaId?: string;
  /** Lease lifetime in Redis without a renew; a dead holder is replaced within about this (plus one retry). @default 10000 */
  ttlMs?: number;
  /** How often a held lease is renewed and a free one is tried for. Below `ttlMs - safetyMarginMs`. @default ttlMs / 3 */
  renewEveryMs?: number;
  /**
   * How long before Redis could drop it a lease counts as lost locally: the lease is lost once
   * `ttlMs - safetyMarginMs` has passed since the last successful renew was sent, answered or not,
   * which leaves the holder this long to stop its watcher before anyone else can take over.
   * @default ttlMs / 5
   */
  safetyMarginMs?: number;
  /** Milliseconds for local deadlines (tests); only differences count. @default {@link leaseClock}: monotonic, never slower than the wall clock */
  now?: () => number;
  /** Called when a lease is gained (`held` true) or lost (false), before anything else happens on it. Must not throw (a throw goes to `onError`). @default none */
  onChange?: (backend: string, held: boolean, info: LeaseChange) => void;
  /** Called on every failed Redis command (the loop carries on) and on a throwing `onChange`. Must not throw. @default none */
  onError?: (backend: string, op: LeaseErrorOp, err: unknown) => void;
}

/** {@link WatcherLeasesOptions} with every default filled in and checked. */
export interface LeaseSettings {
  client: RedisClient;
  keyPrefix: string;
  replicaId: string;
  ttlMs: number;
  renewEveryMs: number;
  safetyMarginMs: number;
  now: LeaseClock;
  onChange: (backend: string, held: boolean, info: LeaseChange) => void;
  onError: (backend: string, op: LeaseErrorOp, err: unknown) => void;
}

/** One backend's lease as RedisClient holds it now (`holders()`); the token is no secret, only a counter and a replica id. */
export interface LeaseHolder {
  backend: string;
  /** The holder's replica id; null when nobody holds the lease (`token` is then null, or `RESET_HOLD` while Redis is new or lost its data). */
  replicaId: string | null;
  token: string | null;
  /** Milliseconds until the lease expires in Redis unless renewed; null when nobody holds it. */
  msLeft: number | null;
  /** Whether the holder is this replica. */
  mine: boolean;
}

/** Counters and held leases for metrics (`stats()`); local knowledge, no Redis call. */
export interface LeaseStats {
  /** Each lease this replica holds, with the milliseconds left before its local deadline. */
  held: { backend: string; token: string; msLeft: number }[];
  /** Leases gained since start. */
  acquisitions: number;
  /** Leases lost since start, `release()` included. */
  losses: number;
}

/** A lease option out of range. Code `LEASE_OPTION_INVALID`. */
export class LeaseOptionError extends Error {
  readonly code = 'LEASE_OPTION_INVALID';
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
    this.name = 'LeaseOptionError';
  }
}

/** `contend()` after `release()` or `stop()`. Code `LEASES_STOPPED`. */
export class LeasesStoppedError extends Error {
  readonly code = 'LEASES_STOPPED';
  constructor() {
    super('the watcher leases were released or stopped; make a new WatcherLeases to contend again');
    this.name = 'LeasesStoppedError';
  }
}

/** A default replica id people can read in `holders()` and CLIENT LIST, unique by its random part. */
export const defaultReplicaId = (): string => `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;

const NAME = /^[\x21-\x7e]{1,200}$/;

/** Checks a name used in a key or a token (a backend id, a replica id). @throws LeaseOptionError */
export function checkName(option: string, value: unknown): string {
  if (typeof value !== 'string' || !NAME.test(value))
    throw new LeaseOptionError(option, 'must be 1-200 printable characters without spaces');
  return value;
}

const whole = (option: string, value: number, min: number, max: number): number => {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new LeaseOptionError(option, `must be a whole number of ms from ${min} to ${max} (got ${value})`);
  return value;
};

/** Fills in defaults and checks ranges. @throws LeaseOptionError */
export function leaseSettings(o: WatcherLeasesOptions): LeaseSettings {
  if (!o.client) throw new LeaseOptionError('client', 'is required (an ioredis client)');
  const keyPrefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  // A brace in the prefix would make it the hash tag and split the live path over Cluster slots.
  if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix))
    throw new LeaseOptionError('keyPrefix', 'must be a string without { or }');
  const ttlMs = whole('ttlMs', o.ttlMs ?? LEASE_DEFAULTS.ttlMs, 100, 600_000);
  const safetyMarginMs = whole('safetyMarginMs', o.safetyMarginMs ?? Math.floor(ttlMs / 5), 0, ttlMs - 50);
  const renewEveryMs = whole('renewEveryMs', o.renewEveryMs ?? Math.floor(ttlMs / 3), 10, ttlMs - safetyMarginMs - 1);
  return {
    client: o.client,
    keyPrefix,
    replicaId: checkName('replicaId', o.replicaId ?? defaultReplicaId()),
    ttlMs,
    renewEveryMs,
    safetyMarginMs,
    now: o.now ?? leaseClock(),
    onChange: o.onChange ?? (() => {}),
    onError: o.onError ?? (() => {}),
  };
}
