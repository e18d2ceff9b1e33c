/**
 * What the feed has already said, so that one real transition is one event (docs/subscriptions.md,
 * "One event per transition"). `changesOf` folds what one delta shows; this adds the memory that
 * spans deltas and sources:
 * - the gateway's own ATTACHING/DETACHING (sent when it accepts an attach or detach) stands for
 *   the watcher's first sighting of the same attachment in the same state, which is then not sent
 *   again;
 * - a volume status folded into an attach or detach (RESERVED, ATTACHING, DETACHING) is not
 *   reported, so the STATUS_CHANGED that ends it names the status subscribers last saw as
 *   `previousStatus`, and none is sent when the volume is back where it started (a rolled-back
 *   attach: the attachment's own change says so). The gateway's announcement folds it too when the
 *   watcher's read does not show the attachment yet (a poll that read Cinder, not yet Nova).
 * Entries go when the transition ends; ones that never end (an attach that failed before any
 * watcher saw it) expire after `ttlMs`.
 */
import type { AttachmentState, VolumeStatus } from '../../adapters/contract/model';
import type { VolumeDelta } from '../../adapters/contract/watch';
import { changesOf, foldsStatus, transitOf, volumeGlobalId } from './diff';
import type { ChangeInput } from './types';

/** Options of {@link Transitions}. */
export interface TransitionsOptions {
  /** How long an announced attach/detach or a folded status is remembered at most, in ms. @default 3600000 (1 h) */
  ttlMs?: number;
}

interface Remembered<T> {
  value: T;
  at: number;
}

/**
 * What a {@link Transitions} remembers, as JSON can carry it: the lease holder writes its memory of
 * a backend with every append (subscriptions/replication/), so the replica that takes the watcher
 * over folds and announces exactly as the old holder would have. Each entry: key, value, when (ms).
 */
export interface TransitionsState {
  announced: Array<[key: string, state: AttachmentState, at: number]>;
  reported: Array<[volume: string, status: VolumeStatus, at: number]>;
}

/** The key of an attachment: volume and consumer (Nova echoes a server id in its own case). */
const attachmentKey = (c: ChangeInput): string | null =>
  c.attachment ? `${c.volumeId}\u0000${c.attachment.consumerId.toLowerCase()}` : null;

export class Transitions {
  readonly #ttlMs: number;
  /** Attachments whose ATTACHING/DETACHING the gateway sent, by attachment key. */
  readonly #announced = new Map<string, Remembered<AttachmentState>>();
  /** Volumes in a folded status, by global id: the status last reported. */
  readonly #reported = new Map<string, Remembered<VolumeStatus>>();

  constructor(o: TransitionsOptions = {}) {
    this.#ttlMs = o.ttlMs ?? 3_600_000;
  }

  /** Entries held (tests, and a bound check). */
  get size(): number {
    return this.#announced.size + this.#reported.size;
  }

  /** What is remembered now (see {@link TransitionsState}). */
  remembered(): TransitionsState {
    this.#expire();
    return {
      announced: [...this.#announced].map(([k, e]) => [k, e.value, e.at]),
      reported: [...this.#reported].map(([k, e]) => [k, e.value, e.at]),
    };
  }

  /**
   * Takes over what another replica remembered (a watcher hand-over): its folded statuses replace
   * this one's, its announcements join this one's own. Malformed entries are skipped.
   */
  restore(m: TransitionsState): void {
    const valid = (e: unknown): e is [string, string, number] =>
      Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string' && Number.isFinite(e[2]);
    const by = <T>(entries: unknown): Array<[string, Remembered<T>]> =>
      (Array.isArray(entries) ? entries.filter(valid) : []).map(([k, v, at]) => [k, { value: v as T, at }]);
    const announced = [...by<AttachmentState>(m.announced), ...this.#announced];
    const reported = by<VolumeStatus>(m.reported);
    this.#announced.clear();
    this.#reported.clear();
    // Kept in age order, which `#expire` relies on.
    for (const [k, e] of announced.sort((x, y) => x[1].at - y[1].at)) this.#announced.set(k, e);
    for (const [k, e] of reported.sort((x, y) => x[1].at - y[1].at)) this.#reported.set(k, e);
    this.#expire();
  }

  /** The gateway's own changes (an accepted attach or detach): remembered, then to be sent. */
  announce(changes: readonly ChangeInput[]): ChangeInput[] {
    this.#expire();
    const at = Date.now();
    for (const c of changes) {
      const key = attachmentKey(c);
      if (!key || !c.attachment) continue;
      // Re-inserted, so that the map stays in age order for `#expire`.
      this.#announced.delete(key);
      this.#announced.set(key, { value: c.attachment.state, at });
    }
    return [...changes];
  }

  /** A watcher's deltas → the changes to send. */
  observe(deltas: readonly VolumeDelta[]): ChangeInput[] {
    this.#expire();
    return deltas.flatMap((d) => this.#delta(d));
  }

  #delta(d: VolumeDelta): ChangeInput[] {
    let changes = changesOf(d);
    const v = d.after ?? d.before;
    if (!v) return changes;
    const id = volumeGlobalId(v);
    const said = this.#reported.get(id);
    const byAnnouncement = !foldsStatus(d) && this.#announcedOn(id, transitOf(d));
    if (byAnnouncement) changes = changes.filter((c) => c.type !== 'STATUS_CHANGED');
    if (foldsStatus(d) || byAnnouncement) {
      if (!said) this.#reported.set(id, { value: d.before!.status, at: Date.now() });
    } else if (said && (!d.after || d.after.status !== d.before?.status)) {
      // The folded move ends here: say it from the status subscribers last saw.
      this.#reported.delete(id);
      changes = changes
        .filter((c) => !(c.type === 'STATUS_CHANGED' && d.after?.status === said.value))
        .map((c) => ({ ...c, previousStatus: said.value }));
    }
    return changes.filter((c) => this.#new(c));
  }

  /** Whether the gateway announced an attachment of volume `id` in `state`. */
  #announcedOn(id: string, state: AttachmentState | undefined): boolean {
    if (state === undefined) return false;
    for (const [key, e] of this.#announced) if (key.startsWith(`${id}\u0000`) && e.value === state) return true;
    return false;
  }

  /** False for the watcher's sighting of what the gateway already announced. */
  #new(c: ChangeInput): boolean {
    const key = attachmentKey(c);
    const announced = key ? this.#announced.get(key) : undefined;
    if (!key || !announced) return true;
    // An announced attach no watcher has seen yet, gone from a view that held only the
    // announcement (a take-over compares with it): not a detach. A watcher never reports one.
    if (
      announced.value === 'ATTACHING' &&
      c.previousAttachmentState === 'ATTACHING' &&
      c.attachment!.state === 'DETACHED'
    )
      return false;
    this.#announced.delete(key);
    return c.attachment!.state !== announced.value;
  }

  #expire(): void {
    const oldest = Date.now() - this.#ttlMs;
    // Maps iterate in insertion order: the oldest entries come first.
    for (const m of [this.#announced, this.#reported] as Array<Map<string, Remembered<unknown>>>) {
      for (const [k, e] of m) {
        if (e.at >= oldest) break;
        m.delete(k);
      }
    }
  }
}
