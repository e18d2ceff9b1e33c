/**
 * The memory backend: the whole contract over data held in this process — volumes, host
 * attachments, snapshots, changes that finish after a delay, a watcher fed by every change, and
 * tokens whose grants are checked on every call. A real backend (allowed in production): it starts
 * no simulator and talks to nothing. This class is the contract layer only; each method delegates
 * (`volumes.ts`, `attach.ts`, `snapshots.ts`, `access.ts`, `watch.ts`, `operations.ts`).
 */
import type {
  Accepted,
  AttachTarget,
  BackendPage,
  CallOptions,
  CallerCredential,
  DeleteVolumeOptions,
  DetachTarget,
  OpaquePage,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeBackend,
  VolumeListQuery,
  VolumeSpec,
} from '../contract/backend';
import { advertise, CORE_CAPABILITIES, type SnapshotReads, type VolumePatch, type VolumeUpdates } from '../contract/capabilities';
import type { ChangeCheck, CompletionRule, TrackedChanges } from '../contract/completion';
import { timedProbe } from '../contract/health';
import type { BackendHealth, KeyValue, Snapshot, Volume, VolumeRef } from '../contract/model';
import type { AccessGrant, SubscriberAccess, VolumeWatcher, Watching, WatcherOptions } from '../contract/watch';
import { BreakerBoard } from '../http/breaker';
import { MemoryAccess } from './access';
import * as attach from './attach';
import type { MemoryContext } from './context';
import type { MemoryData } from './data';
import { DataFileWriter, readDataFile } from './file';
import './ids';
import { Faults, NO_FAULTS, type FaultOptions } from './faults';
import { DelayedChanges } from './operations';
import { defaultSeed, generateSeed } from './seed';
import * as snapshots from './snapshots';
import { MEMORY_SETTINGS } from './settings';
import { MemoryStore } from './store';
import * as volumes from './volumes';
import { MemoryWatcher } from './watch';


/** Where the data come from. */
export type MemorySource =
  /** A JSON data file; `writeBack` writes every change to it. */
  | { file: string; writeBack?: boolean }
  /** Generated volumes (`generateSeed`). */
  | { generate: { volumes: number; attachmentsPerVolume: number; namespaces?: readonly string[]; snapshotsPerVolume?: number } }
  /** Given data (copied). */
  | { data: MemoryData }
  /** The default set (`defaultSeed`). */
  | { default: true };

export interface MemoryBackendOptions {
  backend: string;
  /** @default the default set */
  source?: MemorySource;
  /** How long changes take, ms; 0: they finish before the mutation answers. @default 1000 */
  operationDelayMs?: number;
  /** Injected latency and failures. @default none */
  faults?: Partial<FaultOptions>;
  /** Shared breakers (the registry's board). @default a board of its own */
  breakers?: BreakerBoard;
  /** Told of a failed write-back. @default ignore */
  onWriteError?: (err: unknown) => void;
}

function load(source: MemorySource): MemoryData {
  if ('file' in source) return readDataFile(source.file, 'dataFile');
  if ('generate' in source) return generateSeed(source.generate);
  if ('data' in source) return structuredClone(source.data);
  return defaultSeed();
}

export class MemoryBackend implements VolumeBackend, VolumeUpdates, SnapshotReads, TrackedChanges, Watching, SubscriberAccess {
  readonly id: string;
  readonly kind = 'MEMORY';
  // Facets (capabilities.ts): this class implements each one itself, by delegation.
  readonly volumeUpdates: VolumeUpdates = this;
  readonly snapshotReads: SnapshotReads = this;
  readonly trackedChanges: TrackedChanges = this;
  readonly watching: Watching = this;
  readonly subscriberAccess: SubscriberAccess = this;
  readonly capabilities = advertise(this, CORE_CAPABILITIES);
  readonly #ctx: MemoryContext;
  readonly #source: MemorySource;
  readonly #initial: MemoryData;
  readonly #writer: DataFileWriter | null;

  constructor(o: MemoryBackendOptions) {
    this.id = o.backend;
    this.#source = o.source ?? { default: true };
    this.#initial = load(this.#source);
    const store = new MemoryStore(o.backend, this.#initial);
    this.#ctx = {
      backend: o.backend,
      store,
      access: new MemoryAccess(o.backend, () => store.access),
      faults: new Faults(o.backend, { ...NO_FAULTS, ...o.faults }, o.breakers ?? new BreakerBoard()),
      changes: new DelayedChanges(o.operationDelayMs ?? MEMORY_SETTINGS.operationDelayMs.default),
    };
    const s = this.#source;
    this.#writer = 'file' in s && s.writeBack ? new DataFileWriter(s.file, () => store.toData(), o.onWriteError) : null;
    if (this.#writer) store.onWrite(() => this.#writer!.changed());
  }

  /** Tokens declared and no anonymous grants: lists leave this backend out without a token. */
  get requiresCredential(): boolean {
    return this.#ctx.access.requiresCredential;
  }

  /** Injected faults, changeable while running (a lab can open and close the breaker). */
  get faults(): FaultOptions {
    return this.#ctx.faults.options;
  }

  set faults(f: FaultOptions) {
    this.#ctx.faults.options = { ...f };
  }

  /** Up, unless an injected failure or an open breaker says otherwise. */
  health(signal?: AbortSignal): Promise<BackendHealth> {
    return timedProbe(async () => {
      const n = await this.#ctx.faults.call({ signal }, () => this.#ctx.store.size);
      return { up: true, message: `${n} volumes held in memory` };
    });
  }

  // ---- data -----------------------------------------------------------------------------------

  /**
   * Back to the data as they were at start. Running changes end FAILED; watchers hear of every
   * volume that differs; the file is written when `writeBack` is set.
   */
  reset(): void {
    this.#replace(structuredClone(this.#initial), 'the data were reset');
  }

  /** Reads the source again (the data file as it is now). @throws ConfigError when the file is bad (the data stay) */
  reload(): void {
    this.#replace(load(this.#source), 'the data were reloaded');
  }

  /** Resolves when every change so far is written back (at once without `writeBack`). */
  flush(): Promise<void> {
    return this.#writer?.flush() ?? Promise.resolve();
  }

  /** The data as a data file would hold them. */
  snapshotData(): MemoryData {
    return this.#ctx.store.toData();
  }

  #replace(data: MemoryData, why: string): void {
    this.#ctx.changes.abandon(why);
    this.#ctx.store.replace(data);
    this.#writer?.changed();
  }

  // ---- core -----------------------------------------------------------------------------------

  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    return volumes.listVolumes(this.#ctx, q, o);
  }

  getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    return volumes.getVolume(this.#ctx, ref, o);
  }

  getVolumes(refs: readonly VolumeRef[], o: CallOptions): Promise<Array<Volume | null | Error>> {
    return volumes.getVolumes(this.#ctx, refs, o);
  }

  createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    return volumes.createVolume(this.#ctx, spec, o);
  }

  deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    return volumes.deleteVolume(this.#ctx, ref, opts, o);
  }

  attachVolume(ref: VolumeRef, target: AttachTarget, o: CallOptions): ReturnType<typeof attach.attachVolume> {
    return attach.attachVolume(this.#ctx, ref, target, o);
  }

  detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    return attach.detachVolume(this.#ctx, ref, target, o);
  }

  extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>> {
    return volumes.extendVolume(this.#ctx, ref, newSizeBytes, o);
  }

  listSnapshots(q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
    return snapshots.listSnapshots(this.#ctx, q, o);
  }

  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    return snapshots.createSnapshot(this.#ctx, spec, o);
  }

  deleteSnapshot(ref: SnapshotRef, _secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>> {
    return snapshots.deleteSnapshot(this.#ctx, ref, o);
  }

  /** Ends running changes (FAILED) and writes the last data back. */
  async close(): Promise<void> {
    this.#ctx.changes.abandon('the backend was closed');
    await this.flush();
  }

  // ---- capabilities ---------------------------------------------------------------------------

  updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume> {
    return volumes.updateVolume(this.#ctx, ref, patch, o);
  }

  getSnapshot(ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null> {
    return snapshots.getSnapshot(this.#ctx, ref, o);
  }

  /** Changes are known by their rule's id; no read and no credential needed. */
  async checkChange(rule: CompletionRule): Promise<ChangeCheck> {
    return this.#ctx.changes.check(rule);
  }

  // ---- live path ------------------------------------------------------------------------------

  createWatcher(o: WatcherOptions): VolumeWatcher {
    return new MemoryWatcher(this.id, this.#ctx.store, o);
  }

  async checkAccess(scope: string, _volume: VolumeRef, o: CallOptions): Promise<AccessGrant> {
    return this.#ctx.access.checkAccess(scope, o);
  }

  async checkCredential(o: CallOptions): Promise<void> {
    this.#ctx.access.checkCredential(o);
  }

  redact(volume: Volume, grant: AccessGrant): Volume {
    return this.#ctx.access.redact(volume, grant);
  }

  /** The watcher and change checks read the data directly: the gateway's own means need no token. */
  async serviceCredential(): Promise<CallerCredential | null> {
    return {};
  }
}
