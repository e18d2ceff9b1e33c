/**
 * The volume doctor (docs/doctor.md): for every backend with the `diagnosis` facet whose watcher
 * this replica runs, a {@link BackendDoctor} fed by the watcher's deltas, with a full pass at most
 * once per interval. It never applies a remedy. What it holds is served by `ProblemSource`.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { OperationRecord, VolumeRef } from '../../adapters/contract/model';
import type { VolumeDelta, VolumeWatcher } from '../../adapters/contract/watch';
import type { OpenProblem } from '../../adapters/contract/diagnosis';
import type { DiagnosisGap, ProblemSource } from '../../domain/problems';
import { GatewayAttr, inBackgroundSpan } from '../../adapters/http/tracing';
import { BackendDoctor, type DoctorState, type PassStats, type ProblemChange } from './backend-doctor';
import { RunningOperations } from './running-operations';

/** The doctor's settings (server/doctor-config.ts declares them). */
export interface DoctorSettings {
  /** Time between two full passes of one backend, in ms. @default 60000 */
  intervalMs: number;
  /** Longest the facts' reads of one pass may take, in ms. @default 30000 */
  factsTimeoutMs: number;
}

export const DOCTOR_DEFAULTS: Readonly<DoctorSettings> = Object.freeze({ intervalMs: 60_000, factsTimeoutMs: 30_000 });

/** Until a backend's first pass, how often the doctor looks whether its watcher is current. */
const FIRST_PASS_RETRY_MS = 1_000;

/**
 * Where the lease holder of a backend keeps its open problems across replicas (Redis, under the
 * lease's fence: subscriptions/replication/problem-snapshots.ts).
 */
export interface ProblemStore {
  /** Writes a backend's doctor state; false when this replica's fence no longer holds. */
  write(backend: string, state: DoctorState): Promise<boolean>;
  /** A backend's doctor state as last written; null when none was. */
  read(backend: string): Promise<DoctorState | null>;
}

/** How often a replica that does not watch a backend reads that backend's problems from the store. */
const MIRROR_EVERY_MS = 2_000;

/** What the doctor is built with. */
export interface DoctorOptions extends Partial<DoctorSettings> {
  backends: readonly VolumeBackend[];
  /** The running watcher of a backend (the live feed's). */
  watcher(backend: string): VolumeWatcher | undefined;
  /** Whether this replica runs the backend's watcher (the lease holder). @default always */
  holds?(backend: string): boolean;
  /** The tracker's state changes, for the index of running operations. */
  operations: { subscribe(listener: (r: OperationRecord) => void): () => void };
  /** Every change, per backend, in the order found. */
  onChanges?(backend: string, changes: readonly ProblemChange[]): void;
  /** A pass that failed (its facts could not be read). */
  onError?(err: unknown, backend: string): void;
  /** A pass that ended. */
  onPass?(backend: string, stats: PassStats): void;
  /** Across replicas: where the holder keeps its open problems, and the others read them. @default none */
  store?: ProblemStore;
}

interface Entry {
  backend: VolumeBackend;
  doctor: BackendDoctor;
  timer: NodeJS.Timeout | null;
  /** Whether this replica held the backend at the last tick (a gain restores from the store). */
  held: boolean;
  /** Another replica's problems of the backend, as the store last had them; null before a read. */
  mirror: { problems: OpenProblem[]; at: number } | null;
  /** A write of the open problems is wanted (after changes), or under way. */
  write: { wanted: boolean; running: boolean };
}

export class VolumeDoctor implements ProblemSource {
  readonly #o: DoctorOptions;
  readonly #s: DoctorSettings;
  readonly #entries = new Map<string, Entry>();
  readonly #running = new RunningOperations();
  #unsubscribe: (() => void) | null = null;
  #stopped = false;

  constructor(o: DoctorOptions) {
    this.#o = o;
    this.#s = { ...DOCTOR_DEFAULTS, ...o };
    for (const b of o.backends) {
      const diagnosis = b.diagnosis;
      if (!diagnosis || !b.watching) continue;
      const entry: Entry = {
        backend: b,
        doctor: new BackendDoctor(b.id, diagnosis, this.#running, (c) => {
          o.onChanges?.(b.id, c);
          this.#keep(entry);
        }),
        timer: null,
        held: false,
        mirror: null,
        write: { wanted: false, running: false },
      };
      this.#entries.set(b.id, entry);
    }
  }

  start(): void {
    this.#unsubscribe = this.#o.operations.subscribe((r) => this.#running.update(r));
    for (const e of this.#entries.values()) this.#schedule(e, 0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const e of this.#entries.values()) if (e.timer) clearTimeout(e.timer);
    await Promise.resolve();
  }

  /** Listeners a backend's watcher should count: the doctor needs its view current. */
  demand(backend: string): number {
    return this.#entries.has(backend) && this.#holds(backend) ? 1 : 0;
  }

  /** The watcher's deltas of a backend: its changed volumes are checked again at once. */
  deltas(backend: string, deltas: readonly VolumeDelta[]): void {
    const e = this.#entries.get(backend);
    if (!e || !e.doctor.lastPass || !this.#holds(backend)) return;
    try {
      e.doctor.deltas(deltas);
    } catch (err) {
      this.#o.onError?.(err, backend);
    }
  }

  problems(backend: string): readonly OpenProblem[] {
    const e = this.#entries.get(backend);
    if (!e) return [];
    return this.#holds(backend) ? e.doctor.problems() : (e.mirror?.problems ?? []);
  }

  ofVolume(ref: VolumeRef): readonly OpenProblem[] {
    const e = this.#entries.get(ref.backend);
    if (!e) return [];
    if (this.#holds(ref.backend)) return e.doctor.ofVolume(ref);
    return (e.mirror?.problems ?? []).filter(
      (p) => p.volume.namespace === ref.namespace && p.volume.nativeId === ref.nativeId,
    );
  }

  gap(backend: string): DiagnosisGap {
    const e = this.#entries.get(backend);
    if (!e)
      return {
        reason: 'NOT_DIAGNOSED',
        message: `backend "${backend}" has no volume doctor (no diagnosis or no watcher)`,
      };
    if (!this.#holds(backend))
      return e.mirror
        ? null
        : {
            reason: 'NOT_DIAGNOSED',
            message: `backend "${backend}": the replica that watches it has not yet said its problems`,
          };
    if (!e.doctor.lastPass)
      return { reason: 'NOT_DIAGNOSED', message: `backend "${backend}": the doctor's first pass has not finished` };
    return null;
  }

  /** Open problems by backend and kind (the gauge). */
  counts(): Array<{ backend: string; kind: string; count: number }> {
    const out: Array<{ backend: string; kind: string; count: number }> = [];
    for (const [id, e] of this.#entries) {
      if (!this.#holds(id)) continue;
      const byKind = new Map<string, number>();
      for (const p of e.doctor.problems()) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + 1);
      for (const kind of e.backend.diagnosis!.kinds) out.push({ backend: id, kind, count: byKind.get(kind) ?? 0 });
    }
    return out;
  }

  /** The backends diagnosed here and their last pass. */
  passes(): Array<{ backend: string; last: PassStats | null }> {
    return [...this.#entries].map(([backend, e]) => ({ backend, last: e.doctor.lastPass }));
  }

  #holds(backend: string): boolean {
    return this.#o.holds?.(backend) ?? true;
  }

  #schedule(e: Entry, ms: number): void {
    if (this.#stopped) return;
    e.timer = setTimeout(() => void this.#tick(e), ms);
    e.timer.unref();
  }

  async #tick(e: Entry): Promise<void> {
    e.timer = null;
    const w = this.#o.watcher(e.backend.id);
    if (!this.#holds(e.backend.id)) {
      // Another replica runs the watcher, and so the checks: this one answers from what it keeps.
      if (e.held) e.doctor.clear();
      e.held = false;
      await this.#mirror(e);
      return this.#schedule(e, this.#o.store ? MIRROR_EVERY_MS : FIRST_PASS_RETRY_MS);
    }
    if (!e.held) {
      e.held = true;
      e.mirror = null;
      // Gained: start from what the last holder kept, so its problems are not opened again.
      const kept = await this.#o.store?.read(e.backend.id).catch((err: unknown) => {
        this.#o.onError?.(err, e.backend.id);
        return null;
      });
      if (kept) e.doctor.restore(kept);
    }
    if (!w || !w.current) return this.#schedule(e, e.doctor.lastPass ? this.#s.intervalMs : FIRST_PASS_RETRY_MS);
    try {
      // Background work: its reads are sampled as such, never children of a request (docs/tracing.md).
      await inBackgroundSpan('doctor pass', { [GatewayAttr.backend]: e.backend.id }, async () =>
        e.doctor.pass(() => w.volumes(), await this.#serviceOptions(e.backend)),
      );
      this.#o.onPass?.(e.backend.id, e.doctor.lastPass!);
      // Also with no change: the other replicas learn the backend is diagnosed.
      this.#keep(e);
    } catch (err) {
      this.#o.onError?.(err, e.backend.id);
    }
    this.#schedule(e, e.doctor.lastPass ? this.#s.intervalMs : FIRST_PASS_RETRY_MS);
  }

  /** Reads another replica's problems of a backend from the store. */
  async #mirror(e: Entry): Promise<void> {
    if (!this.#o.store) return;
    try {
      const state = await this.#o.store.read(e.backend.id);
      e.mirror = state ? { problems: state.problems, at: Date.now() } : null;
    } catch (err) {
      this.#o.onError?.(err, e.backend.id);
    }
  }

  /** Keeps the open problems in the store after changes: one write at a time, the last state wins. */
  #keep(e: Entry): void {
    const store = this.#o.store;
    if (!store) return;
    e.write.wanted = true;
    if (e.write.running) return;
    e.write.running = true;
    void (async () => {
      while (e.write.wanted && !this.#stopped) {
        e.write.wanted = false;
        await store.write(e.backend.id, e.doctor.state()).catch((err: unknown) => this.#o.onError?.(err, e.backend.id));
      }
      e.write.running = false;
    })();
  }

  async #serviceOptions(b: VolumeBackend) {
    const credential = await b.subscriberAccess?.serviceCredential();
    return credential ? { credential, signal: AbortSignal.timeout(this.#s.factsTimeoutMs) } : null;
  }
}
