/**
 * One backend's doctor: runs its `diagnosis` checks on the watcher's view, keeps the open
 * problems, and says what opened, changed and resolved. Incremental on the watcher's deltas (only
 * the volumes they name are checked again); a full pass reads the facts the checks need once and
 * checks every volume, which also ends what the facts alone showed.
 */
import type { CallOptions } from '../../adapters/contract/call-options';
import type { Diagnosis, DiagnosisContext, Finding } from '../../adapters/contract/diagnosis';
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { VolumeDelta } from '../../adapters/contract/watch';
import type { OpenProblem } from '../../adapters/contract/diagnosis';
import { ConditionClock } from './condition-clock';
import type { RunningOperations } from './running-operations';

/** A problem that opened, changed (severity, summary or evidence) or resolved. */
export interface ProblemChange {
  type: 'OPENED' | 'UPDATED' | 'RESOLVED';
  /** For RESOLVED, the problem as last seen. */
  problem: OpenProblem;
  /** When the doctor saw the change (RFC 3339). */
  at: string;
}

/** What a backend's doctor hands to the next holder (kept in Redis across replicas). */
export interface DoctorState {
  problems: OpenProblem[];
  /** The conditions' first-seen times, so grace periods and ages go on where they were. */
  seen: Array<[string, number]>;
}

/** What one full pass cost. */
export interface PassStats {
  /** Volumes checked. */
  volumes: number;
  /** CPU-bound time of the checks, in ms (the facts' reads not included). */
  checkMs: number;
  /** Time of the facts' reads, in ms; 0 when the checks need none. */
  factsMs: number;
  /** When it ended (ms since epoch). */
  at: number;
}

const volumeKey = (ref: VolumeRef): string => `${ref.namespace}\0${ref.nativeId}`;

/** The problem's id: the same volume, kind and subject give the same id. */
const problemId = (backend: string, f: Finding): string =>
  encodeGlobalId({
    kind: 'Problem',
    backend,
    scope: f.volume.namespace,
    nativeId: f.volume.nativeId,
    subId: `${f.kind}:${f.subject}`,
  });

/** Deep equality of JSON-like values; shared objects (the view's attachments) compare at once. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  // Keys holding undefined do not count: a problem read back from JSON (another replica's) has none.
  const keys = (o: object): string[] => Object.keys(o).filter((k) => (o as Record<string, unknown>)[k] !== undefined);
  const ka = keys(a);
  if (ka.length !== keys(b).length) return false;
  return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Whether a reader of the problem would see it change (a JSON text each pass cost more than the checks). */
const changed = (a: Finding, b: Finding): boolean =>
  a.severity !== b.severity ||
  a.summary !== b.summary ||
  !same(a.evidence, b.evidence) ||
  !same(a.remedies, b.remedies);

export class BackendDoctor {
  readonly #open = new Map<string, OpenProblem>();
  /** Volume key → ids of its problems found by `checkVolume`. */
  readonly #byVolume = new Map<string, Set<string>>();
  /** Ids found by `checkFacts` in the last pass. */
  #fromFacts = new Set<string>();
  #facts: unknown = null;
  /** When the facts began to be read, on the doctor's clock; null before any. */
  #factsReadAt: number | null = null;
  /** Ids restored from another replica and not yet confirmed by a full pass here. */
  readonly #restored = new Set<string>();
  readonly #clock = new ConditionClock();
  #last: PassStats | null = null;

  constructor(
    readonly backend: string,
    private readonly diagnosis: Diagnosis,
    private readonly running: RunningOperations,
    private readonly onChanges: (changes: ProblemChange[]) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last full pass's cost; null before the first. */
  get lastPass(): PassStats | null {
    return this.#last;
  }

  problems(): OpenProblem[] {
    return [...this.#open.values()];
  }

  /** What another replica needs to take over: the open problems and the conditions' first-seen times. */
  state(): DoctorState {
    return { problems: this.problems(), seen: this.#clock.entries() };
  }

  ofVolume(ref: VolumeRef): OpenProblem[] {
    const ids = this.#byVolume.get(volumeKey(ref));
    const out: OpenProblem[] = [];
    for (const p of this.#open.values())
      if ((ids?.has(p.id) ?? false) || (this.#fromFacts.has(p.id) && volumeKey(p.volume) === volumeKey(ref)))
        out.push(p);
    return out;
  }

  /** Checks again the volumes some deltas name (after a full pass has read the facts, or with none yet). */
  deltas(deltas: readonly VolumeDelta[]): void {
    const ctx = this.#context();
    const changes: ProblemChange[] = [];
    for (const d of deltas) {
      const v = d.after ?? d.before;
      if (!v) continue;
      const found = d.after ? this.#check(d.after, ctx) : [];
      this.#replace(this.#byVolume, volumeKey(v.ref), found, changes, ctx.now);
    }
    if (changes.length > 0) this.onChanges(changes);
  }

  /**
   * A full pass: the facts read with `o` (the service credential; none: the last facts), then every
   * volume of `view()` checked, and what the facts show about volumes the view lacks.
   */
  async pass(view: () => readonly Volume[], o: CallOptions | null): Promise<void> {
    let factsMs = 0;
    if (this.diagnosis.readFacts && o) {
      const t0 = performance.now();
      const readAt = this.now();
      this.#facts = await this.diagnosis.readFacts(o);
      this.#factsReadAt = readAt;
      factsMs = performance.now() - t0;
    }
    const t0 = performance.now();
    this.#clock.beginPass();
    const ctx = this.#context();
    const volumes = view();
    const byVolume = new Map<string, Finding[]>();
    for (const v of volumes) byVolume.set(volumeKey(v.ref), this.#check(v, ctx));
    const fromFacts =
      this.diagnosis.checkFacts && this.#facts !== null
        ? this.diagnosis.checkFacts(this.#facts, (ref) => byVolume.has(volumeKey(ref)), ctx)
        : [];
    this.#clock.endPass();
    const changes: ProblemChange[] = [];
    for (const key of [...this.#byVolume.keys()])
      if (!byVolume.has(key)) this.#replace(this.#byVolume, key, [], changes, ctx.now);
    for (const [key, found] of byVolume) this.#replace(this.#byVolume, key, found, changes, ctx.now);
    this.#replaceFacts(fromFacts, changes, ctx.now);
    for (const id of this.#restored) if (!this.#isFound(id)) this.#resolve(id, changes, ctx.now);
    this.#restored.clear();
    this.#last = { volumes: volumes.length, checkMs: performance.now() - t0, factsMs, at: this.now() };
    if (changes.length > 0) this.onChanges(changes);
  }

  /** Forgets every problem and the last pass, silently: the backend is diagnosed elsewhere now. */
  clear(): void {
    this.#open.clear();
    this.#byVolume.clear();
    this.#fromFacts.clear();
    this.#restored.clear();
    this.#last = null;
  }

  /**
   * Takes over the problems another replica held open (before the first pass here): the first pass
   * then says only what changed since, rather than opening each again. Those it no longer finds resolve.
   */
  restore({ problems, seen }: DoctorState): void {
    this.#clock.seed(seen);
    for (const p of problems) {
      this.#open.set(p.id, p);
      this.#restored.add(p.id);
    }
  }

  #isFound(id: string): boolean {
    if (this.#fromFacts.has(id)) return true;
    for (const ids of this.#byVolume.values()) if (ids.has(id)) return true;
    return false;
  }

  #context(): DiagnosisContext {
    const now = this.now();
    return {
      now,
      operationRunning: (ref) => this.running.running(ref, now),
      firstSeen: (ref, condition) => this.#clock.firstSeen(ref, condition, now),
      ...(this.#factsReadAt === null ? {} : { factsReadAt: this.#factsReadAt }),
    };
  }

  #check(v: Volume, ctx: DiagnosisContext): Finding[] {
    return this.diagnosis.checkVolume(v, this.#facts, ctx);
  }

  /** Replaces one volume's problems from `checkVolume` with `found`, noting each change. */
  #replace(
    index: Map<string, Set<string>>,
    key: string,
    found: readonly Finding[],
    changes: ProblemChange[],
    now: number,
  ): void {
    const held = index.get(key);
    // Most volumes have no problem before or after: nothing to allocate.
    if (found.length === 0 && held === undefined) return;
    const before = held ?? new Set<string>();
    const after = new Set<string>();
    for (const f of found) after.add(this.#upsert(f, changes, now));
    for (const id of before) if (!after.has(id) && !this.#fromFacts.has(id)) this.#resolve(id, changes, now);
    if (after.size > 0) index.set(key, after);
    else index.delete(key);
  }

  #replaceFacts(found: readonly Finding[], changes: ProblemChange[], now: number): void {
    const after = new Set<string>();
    for (const f of found) after.add(this.#upsert(f, changes, now));
    const fromVolumes = new Set<string>();
    for (const ids of this.#byVolume.values()) for (const id of ids) fromVolumes.add(id);
    for (const id of this.#fromFacts) if (!after.has(id) && !fromVolumes.has(id)) this.#resolve(id, changes, now);
    this.#fromFacts = after;
  }

  #upsert(f: Finding, changes: ProblemChange[], now: number): string {
    const id = problemId(this.backend, f);
    const old = this.#open.get(id);
    const at = new Date(now).toISOString();
    const problem: OpenProblem = {
      ...f,
      id,
      backend: this.backend,
      scope: f.volume.namespace,
      seenAt: old?.seenAt ?? at,
    };
    this.#open.set(id, problem);
    if (!old) changes.push({ type: 'OPENED', problem, at });
    else if (changed(old, problem)) changes.push({ type: 'UPDATED', problem, at });
    return id;
  }

  #resolve(id: string, changes: ProblemChange[], now: number): void {
    const problem = this.#open.get(id);
    if (!problem) return;
    this.#open.delete(id);
    changes.push({ type: 'RESOLVED', problem, at: new Date(now).toISOString() });
  }
}
