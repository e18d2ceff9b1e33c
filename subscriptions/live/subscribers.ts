/**
 * The subscriber index: subscriptions filed under the most selective key their interest names
 * (volume id, consumer, node, server, else backend, else "any backend"), so an event finds its
 * candidates by a few map lookups instead of scanning every subscriber. `matches` is the exact
 * check that follows.
 */
import type { ChangeEvent } from '../events';
import { ATTACHMENT_CHANGE_TYPES, PROBLEM_CHANGE_TYPES } from '../events/types';
import type { Interest } from './spec';

/** What the index needs of a subscription. */
export interface Indexed {
  readonly interest: Interest;
}

/** True when the event is one the interest asks for (the index only narrows). */
export function matches(i: Interest, e: ChangeEvent): boolean {
  if (i.field === 'volumeProblemChanged') {
    const f = i.filter;
    const p = e.problem;
    if (!p || !PROBLEM_CHANGE_TYPES.has(e.type)) return false;
    if (f.backends && !f.backends.has(e.backend)) return false;
    if (f.volumeIds && !f.volumeIds.has(e.volumeId)) return false;
    if (f.kinds && !f.kinds.has(p.kind)) return false;
    if (f.severities && !f.severities.has(p.severity)) return false;
    return true;
  }
  // The doctor's changes are for volumeProblemChanged only.
  if (PROBLEM_CHANGE_TYPES.has(e.type)) return false;
  if (i.field === 'volumeChanged') {
    const f = i.filter;
    if (f.backends && !f.backends.has(e.backend)) return false;
    if (f.namespace !== undefined && f.namespace !== e.scope) return false;
    if (f.volumeIds && !f.volumeIds.has(e.volumeId)) return false;
    if (f.types && !f.types.has(e.type)) return false;
    return true;
  }
  if (!ATTACHMENT_CHANGE_TYPES.has(e.type)) return false;
  const t = i.target;
  switch (t.kind) {
    case 'volume':
      return e.volumeId === t.id;
    case 'consumer':
      return e.keys.consumer === t.id;
    case 'node':
      return e.keys.node === t.id;
    case 'server':
      return e.keys.server === t.id;
  }
}

type Bucket = 'backend' | 'any' | 'volume' | 'consumer' | 'node' | 'server';

/** The keys one interest is filed under. */
function keysOf(i: Interest): Array<[Bucket, string]> {
  if (i.field === 'attachmentChanged') return [[i.target.kind, i.target.id]];
  const f = i.filter;
  if (f.volumeIds) return [...f.volumeIds].map((id): [Bucket, string] => ['volume', id]);
  if (f.backends) return [...f.backends].map((b): [Bucket, string] => ['backend', b]);
  return [['any', '']];
}

/** The backends an interest may concern, or null for all of them. */
function backendsOf(i: Interest): Iterable<string> | null {
  if (i.field === 'attachmentChanged') return i.target.kind === 'volume' ? [i.target.backend] : null;
  return i.filter.backends ?? null;
}

export class SubscriberIndex<S extends Indexed> {
  readonly #buckets: Record<Bucket, Map<string, Set<S>>> = {
    backend: new Map(),
    any: new Map(),
    volume: new Map(),
    consumer: new Map(),
    node: new Map(),
    server: new Map(),
  };
  #size = 0;
  /** Demand kept as subscribers come and go: `countFor` runs after every burst of them, so it must not scan. */
  #allBackends = 0;
  readonly #perBackend = new Map<string, number>();

  #count(s: S, by: 1 | -1): void {
    const backends = backendsOf(s.interest);
    if (backends === null) {
      this.#allBackends += by;
      return;
    }
    for (const b of new Set(backends)) {
      const n = (this.#perBackend.get(b) ?? 0) + by;
      if (n === 0) this.#perBackend.delete(b);
      else this.#perBackend.set(b, n);
    }
  }

  get size(): number {
    return this.#size;
  }

  add(s: S): void {
    for (const [b, k] of keysOf(s.interest)) {
      const m = this.#buckets[b];
      let set = m.get(k);
      if (!set) m.set(k, (set = new Set()));
      set.add(s);
    }
    this.#size++;
    this.#count(s, 1);
  }

  /** Removes `s`; false when it was not indexed. */
  delete(s: S): boolean {
    let found = false;
    for (const [b, k] of keysOf(s.interest)) {
      const m = this.#buckets[b];
      const set = m.get(k);
      if (set?.delete(s)) found = true;
      if (set && set.size === 0) m.delete(k);
    }
    if (found) {
      this.#size--;
      this.#count(s, -1);
    }
    return found;
  }

  /**
   * Subscribers whose interest may match `e`: the union of its keys' buckets, before `matches`.
   * When one bucket holds them all (the common case: everyone follows the same volume), that
   * bucket itself, read-only and to be read at once, without a copy of thousands of entries.
   */
  candidates(e: ChangeEvent): ReadonlySet<S> {
    const found: Array<Set<S>> = [];
    const take = (b: Bucket, k: string | undefined): void => {
      if (k === undefined) return;
      const set = this.#buckets[b].get(k);
      if (set && set.size > 0) found.push(set);
    };
    take('any', '');
    take('backend', e.backend);
    take('volume', e.volumeId);
    if (ATTACHMENT_CHANGE_TYPES.has(e.type)) {
      take('consumer', e.keys.consumer);
      take('node', e.keys.node);
      take('server', e.keys.server);
    }
    if (found.length === 1) return found[0]!;
    const out = new Set<S>();
    for (const set of found) for (const s of set) out.add(s);
    return out;
  }

  /** Subscribers that may want changes of `backend` (a watcher's demand). */
  countFor(backend: string): number {
    return this.#allBackends + (this.#perBackend.get(backend) ?? 0);
  }
}
