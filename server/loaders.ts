/**
 * DataLoaders, created per request (never shared across callers: each holds one caller's
 * credential and cache). They batch and de-duplicate backend reads within a request and cap how
 * many run at once. Batch functions return one value or Error per key, in key order.
 */
import DataLoader from 'dataloader';
import type { CallOptions } from '../adapters/backend';
import type { BackendHealth, Plugin, Volume, VolumeRef } from '../adapters/model';
import { mapWithConcurrency } from './concurrency';
import type { BackendRegistry } from './registry';

export interface PluginRef {
  backend: string;
  nativeId: string;
}

export interface Loaders {
  /** Full volume reads (Nomad list stubs carry no allocations, so lists with attachments need these). */
  volume: DataLoader<VolumeRef, Volume | null, string>;
  /** Full plugin reads. */
  plugin: DataLoader<PluginRef, Plugin | null, string>;
  /** One health probe per backend per request. */
  health: DataLoader<string, BackendHealth>;
}

const volumeKey = (r: VolumeRef): string => `${r.backend}\u0000${r.namespace}\u0000${r.nativeId}`;
const pluginKey = (r: PluginRef): string => `${r.backend}\u0000${r.nativeId}`;
const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * @param maxConcurrentReads most backend reads one batch runs at once (the transport's
 *   per-backend connection cap applies on top).
 */
export function createLoaders(registry: BackendRegistry, call: (backend: string) => CallOptions, maxConcurrentReads: number): Loaders {
  const read = <K, V>(keys: readonly K[], fn: (k: K) => Promise<V>): Promise<Array<V | Error>> =>
    mapWithConcurrency(keys, maxConcurrentReads, (k) => fn(k).catch(asError));
  return {
    volume: new DataLoader((refs) => read(refs, (r) => registry.forId(r.backend).getVolume(r, call(r.backend))), { cacheKeyFn: volumeKey }),
    plugin: new DataLoader((refs) => read(refs, (r) => registry.forId(r.backend).getPlugin(r.nativeId, call(r.backend))), { cacheKeyFn: pluginKey }),
    health: new DataLoader((ids) => read(ids, (id) => registry.forId(id).health())),
  };
}
