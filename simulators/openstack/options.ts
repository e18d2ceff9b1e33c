/**
 * Construction options and the delays of every asynchronous transition. Default delays are the
 * medians measured against the real services (test/fixtures/recorded/cinder-21/timings.json,
 * nova-26/timings.md), rounded.
 */

/** Milliseconds each asynchronous transition takes. All are cleared by `close()`. */
export interface Delays {
  /** Volume create: `creating` → `available`. @default 130 (cinder-21 median 128.5 ms) */
  createMs: number;
  /** Volume delete: `deleting` → gone (404). @default 80 (median 79 ms) */
  deleteMs: number;
  /** Extend: `extending` → previous status (or `error_extending`). @default 95 (median 96 ms) */
  extendMs: number;
  /** Snapshot create: `creating` → `available`. @default 95 (median 93 ms) */
  snapshotMs: number;
  /** Snapshot delete: `deleting` → gone. @default 72 (median 72.5 ms) */
  snapshotDeleteMs: number;
  /** Revert to snapshot: volume `reverting`/snapshot `restoring` → `available`. @default 90 */
  revertMs: number;
  /** Retype: `retyping` → previous status. @default 100 */
  retypeMs: number;
  /** Upload to image: `uploading` → previous status. @default 100 */
  uploadMs: number;
  /** Migration: migration_status `starting` → `migrating` → `success` (each step). @default 100 */
  migrateMs: number;
  /** Re-image: `downloading` → previous status. @default 100 */
  reimageMs: number;
  /** Unmanage: `unmanaging` → gone. @default 80 */
  unmanageMs: number;
  /**
   * Nova attach, compute side: attachment `reserved` → connector update (`attaching`).
   * Nova-26 measured reserved→attaching ≈ 120 ms after the POST answered. @default 120
   */
  attachMs: number;
  /** Nova attach: `attaching` → complete (`attached`, volume `in-use`). @default 50 */
  attachCompleteMs: number;
  /**
   * After an injected attach failure, how long the `error_attaching` attachment stays before
   * Nova's rollback deletes it (volume back to `available`). @default 30
   */
  attachRollbackMs: number;
  /** Nova detach: volume `detaching` → attachment deleted (volume `available`). @default 110 */
  detachMs: number;
  /** Nova server delete: `DELETED` → gone, volumes detached. @default 300 */
  serverDeleteMs: number;
}

export const DEFAULT_DELAYS: Readonly<Delays> = Object.freeze({
  createMs: 130,
  deleteMs: 80,
  extendMs: 95,
  snapshotMs: 95,
  snapshotDeleteMs: 72,
  revertMs: 90,
  retypeMs: 100,
  uploadMs: 100,
  migrateMs: 100,
  reimageMs: 100,
  unmanageMs: 80,
  attachMs: 120,
  attachCompleteMs: 50,
  attachRollbackMs: 30,
  detachMs: 110,
  serverDeleteMs: 300,
});

/** Options of `new OpenStackSimulator(options)`. */
export interface OpenStackSimulatorOptions {
  /** Region of every catalog endpoint. @default 'RegionOne' */
  region?: string;
  /** Async transition delays (partial; the rest default, see `Delays`). */
  delays?: Partial<Delays>;
  /** Lifetime of issued tokens. @default 3_600_000 (Keystone's 1 h) */
  tokenTtlMs?: number;
  /**
   * How long Cinder/Nova keep trusting a token they already validated, even after it was
   * revoked (keystonemiddleware `token_cache_time`; expiry is always honoured). @default 300_000
   */
  tokenCacheMs?: number;
  /** Highest Cinder microversion. @default '3.70' (Cinder 21.3.1 as recorded; '3.71' enables os-extend_volume_completion) */
  cinderMaxVersion?: string;
  /** Highest Nova microversion. @default '2.93' (Nova 26 as recorded; ≥ '2.101' makes attach answer 202 without body) */
  novaMaxVersion?: string;
  /**
   * Enforce Cinder/Nova "new default" policies (reader may only read). Zed ships with
   * `enforce_new_defaults = False`, where any role on the project may write. @default false
   */
  enforceNewDefaults?: boolean;
  /** Cinder backend pools (`host@backend#pool`); the first is where volumes land. @default ['openstack-sim@fake#fake', 'openstack-sim@fake2#fake2'] */
  pools?: string[];
  /** Availability zones volumes may be created in. @default ['nova'] */
  availabilityZones?: string[];
  /**
   * Volume types besides `__DEFAULT__` (always there). The default gives clouds the usual
   * multiattach type; pass `[]` for a fresh Cinder exactly as recorded (cinder-21/00 `GET /types`).
   * @default [{ name: 'multiattach', extraSpecs: { multiattach: '<is> True' } }]
   */
  volumeTypes?: Array<{
    name: string;
    extraSpecs?: Record<string, string>;
    description?: string | null;
    isPublic?: boolean;
    id?: string;
  }>;
  /** Hypervisor host name Nova reports as the attachment host (admin-visible `host_name`). @default 'sim-compute' */
  computeHost?: string;
}

/** Options resolved with defaults. */
export interface ResolvedOptions {
  region: string;
  tokenTtlMs: number;
  tokenCacheMs: number;
  cinderMaxVersion: string;
  novaMaxVersion: string;
  enforceNewDefaults: boolean;
  pools: string[];
  availabilityZones: string[];
  computeHost: string;
  volumeTypes: NonNullable<OpenStackSimulatorOptions['volumeTypes']>;
}

export function resolveOptions(o: OpenStackSimulatorOptions): ResolvedOptions {
  return {
    region: o.region ?? 'RegionOne',
    tokenTtlMs: o.tokenTtlMs ?? 3_600_000,
    tokenCacheMs: o.tokenCacheMs ?? 300_000,
    cinderMaxVersion: o.cinderMaxVersion ?? '3.70',
    novaMaxVersion: o.novaMaxVersion ?? '2.93',
    enforceNewDefaults: o.enforceNewDefaults ?? false,
    pools: o.pools && o.pools.length > 0 ? [...o.pools] : ['openstack-sim@fake#fake', 'openstack-sim@fake2#fake2'],
    availabilityZones: o.availabilityZones && o.availabilityZones.length > 0 ? [...o.availabilityZones] : ['nova'],
    computeHost: o.computeHost ?? 'sim-compute',
    volumeTypes: o.volumeTypes ?? [{ name: 'multiattach', extraSpecs: { multiattach: '<is> True' } }],
  };
}
