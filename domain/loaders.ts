/**
 * DataLoaders, created per execution (never shared across callers: each holds one caller's
 * credential and cache). They batch and de-duplicate backend reads within an execution and cap how
 * many run at once. Batch functions return one value or Error per key, in key order. Lists prime
 * `volume`, so a detail read never repeats a list's work.
 */
import DataLoader from 'dataloader';
import type { VolumeBackend } from '../adapters/contract/backend';
import type { CallOptions } from '../adapters/contract/call-options';
import type { SnapshotRef } from '../adapters/contract/call-inputs';
import { asError, mapSettled } from '../adapters/http/concurrency';
import { mergeParts, readEachBackend, type Merged } from '../adapters/listing';
import type {
  Attachment,
  BackendHealth,
  ComputeServer,
  Plugin,
  Snapshot,
  Volume,
  VolumeRef,
} from '../adapters/contract/model';
import type { BackendRegistry } from './registry';
import type { ReadViews } from './watchers';

/** A plugin of one backend. */
export interface PluginRef {
  backend: string;
  nativeId: string;
}

/** A Nova server of one OpenStack backend. */
export interface ServerKey {
  backend: string;
  id: string;
}

export interface Loaders {
  /** Full volume reads, as few calls as each backend allows (`VolumeBackend.getVolumes`). */
  volume: DataLoader<VolumeRef, Volume | null, string>;
  /** Snapshot reads (backends that read one snapshot; de-duplicated, at most `maxConcurrentReads` at once). */
  snapshot: DataLoader<SnapshotRef, Snapshot | null, string>;
  /** Full plugin reads. */
  plugin: DataLoader<PluginRef, Plugin | null, string>;
  /** One health probe per backend per execution. */
  health: DataLoader<string, BackendHealth>;
  /** Nova servers, batched per backend. */
  server: DataLoader<ServerKey, ComputeServer | null, string>;
  /** A server's volume attachments in every backend with server attachments (by Nova server id), merged with the backends left out; batched. */
  serverAttachments: DataLoader<string, Merged<Attachment>, string>;
  /** A Nomad node's volume claims in every backend with node attachments (by node id), merged with the backends left out; batched. */
  nodeClaims: DataLoader<string, Merged<Attachment>, string>;
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

/** The cache key of a volume ref. */
export const volumeKey = (r: VolumeRef): string => `${r.backend}\u0000${r.namespace}\u0000${r.nativeId}`;
const pluginKey = (r: PluginRef): string => `${r.backend}\u0000${r.nativeId}`;
const serverKey = (k: ServerKey): string => `${k.backend}\u0000${k.id}`;

/**
 * Per key, every backend's list merged in backend order, with the backends left out at their
 * places (the merged-field rule, `readEachBackend`): one read per backend for the whole batch.
 */
async function acrossBackends<E extends { backend: VolumeBackend }>(
  entries: readonly E[],
  ids: readonly string[],
  call: (backend: string) => CallOptions,
  read: (e: E, o: CallOptions) => Promise<Map<string, Attachment[]>>,
): Promise<Array<Merged<Attachment> | Error>> {
  try {
    const parts = await readEachBackend(entries, call, read);
    return ids.map((id) => mergeParts(parts, (m) => m.get(id) ?? []));
  } catch (err) {
    const e = asError(err);
    return ids.map(() => e);
  }
}

/**
 * @param maxConcurrentReads most backend reads one batch runs at once (the transport's
 *   per-backend connection cap applies on top).
 * @param watchers the watcher directory, whose current views may serve full reads after a proof
 *   (watchers.ts `readView`). @default none: every volume is read from its backend
 */
export function createLoaders(
  registry: BackendRegistry,
  call: (backend: string) => CallOptions,
  maxConcurrentReads: number,
  watchers?: ReadViews,
): Loaders {
  const read = <K, V>(keys: readonly K[], fn: (k: K) => Promise<V>): Promise<Array<V | Error>> =>
    mapSettled(keys, maxConcurrentReads, fn);
  const readVolumes = async (keys: readonly VolumeRef[]): Promise<Array<Volume | null | Error>> => {
    const backend = registry.forId(keys[0]!.backend);
    return backend
      .getVolumes(keys, call(backend.id), maxConcurrentReads)
      .catch((err: unknown) => keys.map(() => asError(err)));
  };
  /** Per (backend, namespace): the caller's own reads that proved (or refused) access, once per execution. */
  const proofs = new Map<string, Promise<Error | null>>();
  /**
   * Reads one namespace's volumes. With a watcher view, the caller first proves access to the
   * namespace as the backend's `viewReadProof` says (Nomad: one read of the caller's own), once per
   * execution, and the view answers the others; without one, each is read.
   */
  const readNamespace = async (keys: readonly VolumeRef[]): Promise<Array<Volume | null | Error>> => {
    const view = keys.length > 1 ? watchers?.readView(keys[0]!.backend, keys[0]!.namespace) : undefined;
    const proof = view && registry.forId(keys[0]!.backend).watching?.viewReadProof;
    if (!view || !proof) return readVolumes(keys);
    const scope = `${keys[0]!.backend}\u0000${keys[0]!.namespace}`;
    let first: Promise<Array<Volume | null | Error>> | null = null;
    if (!proofs.has(scope)) {
      const proving = proof.prove(keys, readVolumes);
      // A proof that fails refuses the scope; its reads are then never asked for.
      first = proving.then(
        (p) => p.read,
        () => [],
      );
      proofs.set(
        scope,
        proving.then((p) => p.refused, asError),
      );
    }
    const denied = await proofs.get(scope)!;
    if (denied) return keys.map(() => denied);
    const proved = first ? await first : [];
    const out = keys.map((k, i): Volume | null | Error | undefined => (i < proved.length ? proved[i] : view(k)));
    const missing = keys.filter((_, i) => out[i] === undefined);
    // Volumes the view does not hold (just created, or gone) are read as usual.
    const read = missing.length > 0 ? await readVolumes(missing) : [];
    let m = 0;
    return out.map((v) => (v === undefined ? read[m++]! : v));
  };
  const volume = new DataLoader<VolumeRef, Volume | null, string>(
    async (refs) => {
      const out = new Array<Volume | null | Error>(refs.length);
      await Promise.all(
        [...groupBy(refs, (r) => `${r.backend}\u0000${r.namespace}`).values()].map(async (group) => {
          const values = await readNamespace(group.map((g) => g.key));
          group.forEach((g, i) => (out[g.index] = values[i]!));
        }),
      );
      return out;
    },
    { cacheKeyFn: volumeKey },
  );
  return {
    volume,
    server: new DataLoader(
      async (keys) => {
        const out = new Array<ComputeServer | null | Error>(keys.length);
        await Promise.all(
          [...groupBy(keys, (k) => k.backend).values()].map(async (group) => {
            const backend = registry.forId(group[0]!.key.backend);
            try {
              const found = await registry
                .capable(backend, 'serverAttachments')
                .getServers([...new Set(group.map((g) => g.key.id))], call(backend.id));
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
    // The volumes checked against Nova's lists come through `volume`, so they are read once per execution.
    serverAttachments: new DataLoader((ids) =>
      acrossBackends(registry.having('serverAttachments'), ids, call, (b, o) =>
        b.facet.listServerAttachments(ids, o, (refs) => volume.loadMany(refs)),
      ),
    ),
    nodeClaims: new DataLoader((ids) =>
      acrossBackends(registry.having('nodeAttachments'), ids, call, (b, o) =>
        b.facet.listNodeAttachments(ids, o, (refs) => volume.loadMany(refs)),
      ),
    ),
    snapshot: new DataLoader(
      (refs) =>
        read(refs, async (r) =>
          registry.capable(registry.forId(r.backend), 'snapshotReads').getSnapshot(r, call(r.backend)),
        ),
      { cacheKeyFn: (r) => `${r.backend}\u0000${r.scope}\u0000${r.nativeId}` },
    ),
    plugin: new DataLoader(
      (refs) =>
        read(refs, async (r) => {
          const plugins = registry.forId(r.backend).storagePlugins;
          return plugins ? plugins.getPlugin(r.nativeId, call(r.backend)) : null;
        }),
      { cacheKeyFn: pluginKey },
    ),
    health: new DataLoader((ids) => read(ids, (id) => registry.forId(id).health())),
  };
}

/**
 * An execution's loaders, made on first use: a subscription's context lives as long as the
 * subscription and most never load anything (thousands of idle loader sets were ~4 KiB per
 * subscription), and a query that reads nothing makes none. A class, not a getter in the context's
 * object literal: V8 gives each such literal a hidden class of its own in old space, which kept the
 * whole execution (context, loaders, results) alive through every young-generation GC until a full
 * one, and Apollo's copy of the context read the getter anyway.
 */
export class LazyLoaders implements Loaders {
  readonly #make: () => Loaders;
  #made: Loaders | undefined;

  constructor(make: () => Loaders) {
    this.#make = make;
  }

  #all(): Loaders {
    return (this.#made ??= this.#make());
  }

  get volume(): Loaders['volume'] {
    return this.#all().volume;
  }
  get snapshot(): Loaders['snapshot'] {
    return this.#all().snapshot;
  }
  get plugin(): Loaders['plugin'] {
    return this.#all().plugin;
  }
  get health(): Loaders['health'] {
    return this.#all().health;
  }
  get server(): Loaders['server'] {
    return this.#all().server;
  }
  get serverAttachments(): Loaders['serverAttachments'] {
    return this.#all().serverAttachments;
  }
  get nodeClaims(): Loaders['nodeClaims'] {
    return this.#all().nodeClaims;
  }
}
