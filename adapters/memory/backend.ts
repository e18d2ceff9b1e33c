/**
 * The memory backend: the whole contract over data held in this process — volumes, host
 * attachments, snapshots, changes that finish after a delay, a watcher fed by every change, and
 * tokens whose grants are checked on every call. A real backend (allowed in production): it starts
 * no simulator and talks to nothing. This class is the contract layer only; each method delegates
 * (`volumes/`, `attachments/`, `snapshots/`, `completion/`, `watch/`, `diagnosis/`, `access.ts`,
 * `health.ts`, and `data/keeper.ts` for the data's load, reset, reload and write-back).
 */
import type { VolumeBackend } from '../contract/backend';
import type { Accepted, BackendPage, OpaquePage } from '../contract/call-answers';
import type {
  AttachTarget,
  DeleteSnapshotOptions,
  DeleteVolumeOptions,
  DetachTarget,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeListQuery,
  VolumeSpec,
} from '../contract/call-inputs';
import type { CallOptions, CallerCredential, ProbeCall } from '../contract/call-options';
import {
  advertise,
  CORE_CAPABILITIES,
  type SnapshotReads,
  type VolumePatch,
  type VolumeUpdates,
} from '../contract/capabilities';
import type { ChangeCheck, CompletionRule, TrackedChanges } from '../contract/completion';
import type { BackendHealth, Capability, Snapshot, Volume, VolumeRef } from '../contract/model';
import type { AccessGrant, SubscriberAccess, VolumeWatcher, Watching, WatcherOptions } from '../contract/watch';
import { BreakerBoard } from '../contract/breaker';
import { MemoryAccess } from './access';
import * as attach from './attachments/operations';
import type { MemoryContext } from './context';
import { DataKeeper, type MemorySource } from './data/keeper';
import type { MemoryData } from './data/shape';
import './ids';
import { Faults, NO_FAULTS, type FaultOptions } from './faults';
import { DelayedChanges } from './completion/changes';
import { MemoryDiagnosis } from './diagnosis';
import { memoryThresholds, type GivenThresholds } from './diagnosis/thresholds';
import { MEMORY_SETTINGS } from './settings';
import * as snapshots from './snapshots/operations';
import { health } from './health';
import * as volumes from './volumes/operations';
import { MemoryWatcher } from './watch';

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
  /** The doctor's thresholds (diagnosis/thresholds.ts); those not given (or undefined) are derived from `operationDelayMs`. @default derived */
  diagnosis?: GivenThresholds;
}

export class MemoryBackend
  implements VolumeBackend, VolumeUpdates, SnapshotReads, TrackedChanges, Watching, SubscriberAccess
{
  readonly id: string;
  readonly kind = 'MEMORY';
  // Facets (capabilities.ts): this class implements each one itself, by delegation.
  readonly volumeUpdates: VolumeUpdates = this;
  readonly snapshotReads: SnapshotReads = this;
  readonly trackedChanges: TrackedChanges = this;
  readonly watching: Watching = this;
  readonly subscriberAccess: SubscriberAccess = this;
  readonly diagnosis: MemoryDiagnosis;
  readonly capabilities: ReadonlySet<Capability>;
  readonly #ctx: MemoryContext;
  readonly #data: DataKeeper;

  constructor(o: MemoryBackendOptions) {
    this.id = o.backend;
    const delayMs = o.operationDelayMs ?? MEMORY_SETTINGS.operationDelayMs.default;
    const changes = new DelayedChanges(delayMs);
    this.#data = new DataKeeper(o.backend, o.source ?? { default: true }, changes, o.onWriteError);
    const store = this.#data.store;
    this.#ctx = {
      backend: o.backend,
      store,
      access: new MemoryAccess(o.backend, store),
      faults: new Faults(o.backend, { ...NO_FAULTS, ...o.faults }, o.breakers ?? new BreakerBoard()),
      changes,
    };
    this.diagnosis = new MemoryDiagnosis(this.#ctx, memoryThresholds(delayMs, o.diagnosis));
    this.capabilities = advertise(this, CORE_CAPABILITIES);
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
  health(signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
    return health(this.#ctx, signal, probe);
  }

  // ---- data -----------------------------------------------------------------------------------

  /**
   * Back to the data as they were at start. Running changes end FAILED; watchers hear of every
   * volume that differs; the file is written when `writeBack` is set.
   */
  reset(): void {
    this.#data.reset();
  }

  /** Reads the source again (the data file as it is now). @throws ConfigError when the file is bad (the data stay) */
  reload(): void {
    this.#data.reload();
  }

  /** Resolves when every change so far is written back (at once without `writeBack`). */
  flush(): Promise<void> {
    return this.#data.flush();
  }

  /** The data as a data file would hold them. */
  snapshotData(): MemoryData {
    return this.#ctx.store.toData();
  }

  // ---- core -----------------------------------------------------------------------------------

  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    return volumes.volumePage(this.#ctx, q, o);
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

  deleteSnapshot(ref: SnapshotRef, _opts: DeleteSnapshotOptions, o: CallOptions): Promise<Accepted<void>> {
    return snapshots.deleteSnapshot(this.#ctx, ref, o);
  }

  /** Ends running changes (FAILED) and writes the last data back. */
  close(): Promise<void> {
    return this.#data.close();
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
