/**
 * The data the memory backend holds, and the one place they change. Every change goes through
 * {@link MemoryStore.change}, which tells listeners the volume before and after (the watcher's
 * deltas come from here), and through {@link MemoryStore.onWrite}, which writes the file back when
 * asked. Models are built once per change and shared: callers never change them.
 */
import { sortedPairs } from '../../contract/key-values';
import type { Attachment, Snapshot, Volume, VolumeRef } from '../../contract/model';
import type { AttachmentData, MemoryData, SnapshotData, VolumeData } from './shape';
import { followAttachments } from './hosts';
import { hostConsumer, type MemoryVolumeDetails } from '../model';

/** One volume as its data and its model. */
interface Entry {
  data: VolumeData;
  model: Volume<MemoryVolumeDetails>;
}

/** A volume before and after one change (null: absent). */
export type VolumeChange = (before: Volume | null, after: Volume | null) => void;

export const volumeKey = (namespace: string, id: string): string => `${namespace}/${id}`;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const clone = <T>(v: T): T => structuredClone(v);

export class MemoryStore {
  #volumes = new Map<string, Entry>();
  #snapshots = new Map<string, SnapshotData>();
  /** Snapshots per volume key. */
  #snapshotCounts = new Map<string, number>();
  #order: string[] | null = null;
  #data: MemoryData = { volumes: [] };
  readonly #listeners = new Set<VolumeChange>();
  readonly #writers = new Set<() => void>();

  constructor(
    readonly backend: string,
    data: MemoryData,
  ) {
    this.replace(data);
  }

  /**
   * Workloads, hosts and the storage plugin, as loaded and as attach and detach keep the hosts'
   * lists (the doctor's facts read them). Callers never change them.
   */
  get world(): Readonly<Pick<MemoryData, 'workloads' | 'hosts' | 'storagePlugin'>> {
    return { workloads: this.#data.workloads, hosts: this.#data.hosts, storagePlugin: this.#data.storagePlugin };
  }

  /** Tokens and anonymous grants as loaded (access.ts reads them). */
  get access(): Pick<MemoryData, 'tokens' | 'anonymous'> {
    return { tokens: this.#data.tokens, anonymous: this.#data.anonymous };
  }

  get size(): number {
    return this.#volumes.size;
  }

  /** Called with every volume change, in order. @returns unsubscribe */
  onChange(l: VolumeChange): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  /** Called after every change of any kind (file write-back). @returns unsubscribe */
  onWrite(w: () => void): () => void {
    this.#writers.add(w);
    return () => this.#writers.delete(w);
  }

  /** Volume keys in the listing order (namespace, then id). */
  keys(): readonly string[] {
    this.#order ??= [...this.#volumes.keys()].sort(compare);
    return this.#order;
  }

  volume(namespace: string, id: string): Volume | undefined {
    return this.#volumes.get(volumeKey(namespace, id))?.model;
  }

  volumeByKey(key: string): Volume | undefined {
    return this.#volumes.get(key)?.model;
  }

  /** A copy of a volume's data (changes go through {@link change}). */
  volumeData(namespace: string, id: string): VolumeData | undefined {
    const e = this.#volumes.get(volumeKey(namespace, id));
    return e ? clone(e.data) : undefined;
  }

  snapshots(): Snapshot[] {
    return [...this.#snapshots.values()]
      .sort((a, b) => compare(volumeKey(a.namespace, a.id), volumeKey(b.namespace, b.id)))
      .map((s) => this.#snapshotModel(s));
  }

  snapshot(namespace: string, id: string): Snapshot | undefined {
    const s = this.#snapshots.get(volumeKey(namespace, id));
    return s ? this.#snapshotModel(s) : undefined;
  }

  /**
   * Sets a volume's data (null: removes it; undefined: leaves it as it is, nobody is told) and
   * tells listeners. `update` gets a copy of the current data (undefined when absent).
   */
  change(
    namespace: string,
    id: string,
    update: (current: VolumeData | undefined) => VolumeData | null | undefined,
  ): Volume | null {
    const key = volumeKey(namespace, id);
    const before = this.#volumes.get(key);
    const next = update(before ? clone(before.data) : undefined);
    if (next === undefined) return before?.model ?? null;
    if (next === null) {
      if (!before) return null;
      this.#volumes.delete(key);
      this.#order = null;
    } else {
      if (!before) this.#order = null;
      this.#volumes.set(key, { data: next, model: this.#model(next) });
    }
    // A new list, never changed in place: facts already handed out (a doctor's pass) keep theirs.
    const hosts = followAttachments(this.#data.hosts, key, before?.data, next ?? undefined);
    if (hosts) this.#data.hosts = hosts;
    const after = this.#volumes.get(key)?.model ?? null;
    this.#emit(before?.model ?? null, after);
    this.#written();
    return after;
  }

  /** Sets a snapshot (null: removes it); its volume's details change with it. */
  changeSnapshot(namespace: string, id: string, next: SnapshotData | null): void {
    const key = volumeKey(namespace, id);
    const volumeId = next?.volumeId ?? this.#snapshots.get(key)?.volumeId;
    const had = this.#snapshots.get(key);
    if (had) this.#count(volumeKey(had.namespace, had.volumeId), -1);
    if (next === null) this.#snapshots.delete(key);
    else {
      this.#snapshots.set(key, clone(next));
      this.#count(volumeKey(next.namespace, next.volumeId), 1);
    }
    if (volumeId !== undefined) this.#refresh(volumeKey(namespace, volumeId));
    this.#written();
  }

  /** Replaces everything; listeners hear of every volume that differs. */
  replace(data: MemoryData): void {
    const old = this.#volumes;
    this.#data = {
      tokens: data.tokens,
      anonymous: data.anonymous,
      volumes: [],
      workloads: clone(data.workloads),
      hosts: clone(data.hosts),
      storagePlugin: clone(data.storagePlugin),
    };
    this.#snapshots = new Map((data.snapshots ?? []).map((s) => [volumeKey(s.namespace, s.id), clone(s)]));
    this.#snapshotCounts = new Map();
    for (const s of this.#snapshots.values()) this.#count(volumeKey(s.namespace, s.volumeId), 1);
    this.#volumes = new Map();
    for (const v of data.volumes) {
      const d = clone(v);
      this.#volumes.set(volumeKey(d.namespace, d.id), { data: d, model: this.#model(d) });
    }
    this.#order = null;
    for (const [key, e] of this.#volumes) {
      const before = old.get(key);
      if (!before || JSON.stringify(before.model) !== JSON.stringify(e.model))
        this.#emit(before?.model ?? null, e.model);
    }
    for (const [key, e] of old) if (!this.#volumes.has(key)) this.#emit(e.model, null);
  }

  /** The data as a file holds them. */
  toData(): MemoryData {
    const out: MemoryData = {
      volumes: this.keys().map((k) => clone(this.#volumes.get(k)!.data)),
      snapshots: [...this.#snapshots.values()].map(clone),
    };
    if (this.#data.tokens) out.tokens = clone(this.#data.tokens);
    if (this.#data.anonymous) out.anonymous = clone(this.#data.anonymous);
    if (this.#data.workloads) out.workloads = clone(this.#data.workloads);
    if (this.#data.hosts) out.hosts = clone(this.#data.hosts);
    if (this.#data.storagePlugin) out.storagePlugin = clone(this.#data.storagePlugin);
    return out;
  }

  #count(key: string, by: number): void {
    const n = (this.#snapshotCounts.get(key) ?? 0) + by;
    if (n > 0) this.#snapshotCounts.set(key, n);
    else this.#snapshotCounts.delete(key);
  }

  #refresh(key: string): void {
    const e = this.#volumes.get(key);
    if (!e) return;
    const before = e.model;
    const after = this.#model(e.data);
    // Snapshots show in a volume only as its count: a snapshot becoming ready changes nothing here.
    if (before.details.snapshotCount === after.details.snapshotCount) return;
    e.model = after;
    this.#emit(before, after);
  }

  #emit(before: Volume | null, after: Volume | null): void {
    for (const l of this.#listeners) l(before, after);
  }

  #written(): void {
    for (const w of this.#writers) w();
  }

  #model(d: VolumeData): Volume<MemoryVolumeDetails> {
    const ref: VolumeRef = { backend: this.backend, namespace: d.namespace, nativeId: d.id };
    const attachments = (d.attachments ?? []).map((a) => attachmentModel(ref, a));
    const status = d.status ?? (attachments.length > 0 ? 'IN_USE' : 'AVAILABLE');
    const snapshotCount = this.#snapshotCounts.get(volumeKey(d.namespace, d.id)) ?? 0;
    return {
      __typename: 'Volume',
      ref,
      name: d.name,
      status,
      backendStatus: status.toLowerCase(),
      sizeBytes: d.sizeBytes,
      createdAt: d.createdAt ?? null,
      updatedAt: d.updatedAt ?? d.createdAt ?? null,
      complete: true,
      attachments,
      details: {
        __typename: 'MemoryVolumeDetails',
        ref,
        description: d.description ?? null,
        metadata: sortedPairs(d.metadata),
        snapshotCount,
      },
    };
  }

  #snapshotModel(s: SnapshotData): Snapshot {
    const ready = s.ready ?? true;
    return {
      __typename: 'VolumeSnapshot',
      backend: this.backend,
      scope: s.namespace,
      nativeId: s.id,
      name: s.name,
      pluginId: null,
      sourceExternalVolumeId: null,
      sourceVolume: { backend: this.backend, namespace: s.namespace, nativeId: s.volumeId },
      sizeBytes: s.sizeBytes,
      createdAt: s.createdAt ?? null,
      ready,
      backendStatus: ready ? 'available' : 'creating',
      description: s.description ?? null,
    };
  }
}

/** An attachment's model: a host consumer, its id both the consumer id and the record id. */
export function attachmentModel(ref: VolumeRef, a: AttachmentData): Attachment {
  const state = a.state ?? 'ATTACHED';
  return {
    __typename: 'VolumeAttachment',
    volume: ref,
    consumerId: a.id,
    state,
    backendState: state.toLowerCase(),
    stateReason: null,
    access: a.readOnly ? 'READ_ONLY' : 'READ_WRITE',
    consumer: hostConsumer(a.host, a.workload),
    device: a.device ?? null,
    attachedAt: a.attachedAt ?? null,
    nativeId: a.id,
    tag: null,
    deleteOnTermination: null,
  };
}
