/**
 * DataLoaders, created per request (never shared across callers: each holds one caller's
 * credential and cache). They batch and de-duplicate backend reads within a request and cap how
 * many run at once. Batch functions return one value or Error per key, in key order.
 */
import DataLoader from 'dataloader';
import type { CallOptions } from '../adapters/backend';
import type { BackendHealth, OpenStackServer, Plugin, ServerVolumeAttachment, Volume, VolumeRef } from '../adapters/model';
import { mapWithConcurrency } from '../adapters/concurrency';
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
  /** OpenStack servers (Nova), batched per backend and project. */
  server: DataLoader<ServerKey, OpenStackServer | null, string>;
  /**
   * Each server's Nova volume attachments. Nova lists them per server only, so a batch is one
   * call per server; they all resolve together, so the volumes they name load as one batch.
   */
  serverAttachments: DataLoader<ServerKey, ServerVolumeAttachment[], string>;
}

export interface ServerKey {
  backend: string;
  scope: string;
  id: string;
}

/** Groups keys by a string, keeping each key's index. */
function groupBy<K>(keys: readonly K[], by: (k: K) => string): Map<string, Array<{ key: K; index: number }>> {
  const groups = new Map<string, Array<{ key: K; index: number }>>();
  keys.forEach((key, index) => {
    const g = by(key);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g)!.push({ key, index });
  });
  return groups;
}

const volumeKey = (r: VolumeRef): string => `${r.backend}\u0000${r.namespace}\u0000${r.nativeId}`;
const pluginKey = (r: PluginRef): string => `${r.backend}\u0000${r.nativeId}`;
const serverKey = (k: ServerKey): string => `${k.backend}\u0000${k.scope}\u0000${k.id}`;
const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * @param maxConcurrentReads most backend reads one batch runs at once (the transport's
 *   per-backend connection cap applies on top).
 */
export function createLoaders(registry: BackendRegistry, call: (backend: string) => CallOptions, maxConcurrentReads: number): Loaders {
  const read = <K, V>(keys: readonly K[], fn: (k: K) => Promise<V>): Promise<Array<V | Error>> =>
    mapWithConcurrency(keys, maxConcurrentReads, (k) => fn(k).catch(asError));
  return {
    // Backends with a batch read (OpenStack: shows or one list, by batch size) get whole groups.
    volume: new DataLoader(
      async (refs) => {
        const out = new Array<Volume | null | Error>(refs.length);
        await Promise.all(
          [...groupBy(refs, (r) => `${r.backend}\u0000${r.namespace}`).values()].map(async (group) => {
            const backend = registry.forId(group[0]!.key.backend);
            const keys = group.map((g) => g.key);
            const values = backend.getVolumes
              ? await backend.getVolumes(keys, call(backend.id), maxConcurrentReads).catch((err: unknown) => keys.map(() => asError(err)))
              : await read(keys, (r) => backend.getVolume(r, call(r.backend)));
            group.forEach((g, i) => (out[g.index] = values[i]!));
          }),
        );
        return out;
      },
      { cacheKeyFn: volumeKey },
    ),
    server: new DataLoader(
      async (keys) => {
        const out = new Array<OpenStackServer | null | Error>(keys.length);
        await Promise.all(
          [...groupBy(keys, (k) => `${k.backend}\u0000${k.scope}`).values()].map(async (group) => {
            const { backend, scope } = group[0]!.key;
            try {
              const found = await registry.forId(backend).getServers(scope, [...new Set(group.map((g) => g.key.id))], call(backend));
              for (const g of group) out[g.index] = found.get(g.key.id) ?? null;
            } catch (err) {
              for (const g of group) out[g.index] = asError(err);
            }
          }),
        );
        return out;
      },
      { cacheKeyFn: serverKey },
    ),
    serverAttachments: new DataLoader((keys) => read(keys, (k) => registry.forId(k.backend).listServerVolumeAttachments(k.scope, k.id, call(k.backend))), { cacheKeyFn: serverKey }),
    plugin: new DataLoader((refs) => read(refs, (r) => registry.forId(r.backend).getPlugin(r.nativeId, call(r.backend))), { cacheKeyFn: pluginKey }),
    health: new DataLoader((ids) => read(ids, (id) => registry.forId(id).health())),
  };
}
