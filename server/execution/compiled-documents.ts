/**
 * What compiled execution keeps, and its bound. A compiled document holds far more than the parsed
 * document Apollo's store counts (the generated code, its bytecode, the per-field resolve
 * information: about 3.3 bytes per character of generated source, 20–165 times the parsed
 * document's JSON; bench/compiled-size.ts), so it needs a bound of its own, in bytes:
 * - documents are kept by the SHA-256 of their text and the operation name, least recently used
 *   first out, within `maxBytes` of estimated size (each document's estimate comes with it);
 * - a document is compiled only at its `sightings`-th sighting: one seen once (an attacker's
 *   unique text, a one-off query) runs on graphql-js and costs only an entry in a small record of
 *   sightings, itself bounded in bytes;
 * - trusted documents are compiled at their first sighting and kept for the life of the process,
 *   outside the budget: the allowlist bounds them.
 */
import { LRUCache } from 'lru-cache';

/** The defaults of {@link CompiledDocumentsOptions}. */
export const COMPILED_DOCUMENTS_DEFAULTS = { maxBytes: 64 * 1_048_576, sightings: 2 } as const;

/**
 * The record of documents seen but not yet compiled: at most this many bytes, each entry counted
 * as {@link SIGHTING_ENTRY_BYTES} plus two bytes per character of its key (about 13,000 entries
 * of a hash and a short operation name).
 */
const SIGHTINGS_MAX_BYTES = 4 * 1_048_576;
/** An entry's own cost in the record of sightings, beyond its key: the cache's slots and the map's entry. */
const SIGHTING_ENTRY_BYTES = 128;

/** A document's compiled form and its estimated size in bytes. */
export interface CompiledEntry<T> {
  value: T;
  bytes: number;
}

/** What {@link CompiledDocuments} answers for a document it will not compile yet. */
export const NOT_YET = Symbol('not yet compiled');

export interface CompiledDocumentsOptions<T, A> {
  /** Compiles the operation `operationName` of the document `arg` stands for, and estimates its size. */
  compile: (arg: A, operationName: string | undefined) => CompiledEntry<T>;
  /** Most estimated bytes the documents kept may hold (trusted documents not counted). @default 64 MiB */
  maxBytes?: number;
  /** The sighting at which a document is compiled; the earlier ones run on graphql-js. 1: at once. @default 2 */
  sightings?: number;
  /** Whether the text of SHA-256 `queryHash` is a trusted document. @default none is */
  trusted?: (queryHash: string) => boolean;
  /** Kept in place of a document whose estimate is over an eighth of `maxBytes` (it runs on graphql-js). */
  oversized: T;
  /** Told of each document dropped to stay within `maxBytes`. */
  onEvict?: () => void;
}

/** Documents held now (read at scrape time). */
export interface CompiledDocumentsStats {
  documents: number;
  bytes: number;
  trustedDocuments: number;
  trustedBytes: number;
}

export class CompiledDocuments<T extends object, A> {
  readonly #compile: (arg: A, operationName: string | undefined) => CompiledEntry<T>;
  readonly #kept: LRUCache<string, T>;
  readonly #seen: LRUCache<string, number>;
  readonly #trustedKept = new Map<string, CompiledEntry<T>>();
  #trustedBytes = 0;
  readonly #sightings: number;
  readonly #maxEntryBytes: number;
  readonly #trusted: (queryHash: string) => boolean;
  readonly #oversized: T;

  constructor(o: CompiledDocumentsOptions<T, A>) {
    this.#compile = o.compile;
    const maxBytes = o.maxBytes ?? COMPILED_DOCUMENTS_DEFAULTS.maxBytes;
    this.#sightings = o.sightings ?? COMPILED_DOCUMENTS_DEFAULTS.sightings;
    // One document may not take more than an eighth: a few huge ones cannot flush the rest.
    this.#maxEntryBytes = Math.floor(maxBytes / 8);
    this.#trusted = o.trusted ?? (() => false);
    this.#oversized = o.oversized;
    const onEvict = o.onEvict;
    const dispose = (_value: T, _key: string, reason: LRUCache.DisposeReason): void => {
      if (reason === 'evict') onEvict?.();
    };
    this.#kept = new LRUCache<string, T>({ maxSize: maxBytes, dispose });
    this.#seen = new LRUCache<string, number>({
      maxSize: SIGHTINGS_MAX_BYTES,
      sizeCalculation: (_n, key) => SIGHTING_ENTRY_BYTES + 2 * key.length,
    });
  }

  /**
   * The compiled form of the operation `operationName` of the document whose text has SHA-256
   * `queryHash` (`arg` is what `compile` is given for it): the one kept, else a new one when this
   * is the sighting that compiles, else {@link NOT_YET}.
   */
  get(queryHash: string, operationName: string | undefined, arg: A): T | typeof NOT_YET {
    // The hash has a fixed length: the name after it cannot make two keys equal.
    const key = operationName === undefined ? queryHash : queryHash + operationName;
    const kept = this.#trustedKept.get(key)?.value ?? this.#kept.get(key);
    if (kept !== undefined) return kept;
    if (this.#trusted(queryHash)) {
      const e = this.#compile(arg, operationName);
      this.#trustedKept.set(key, e);
      this.#trustedBytes += Math.ceil(e.bytes);
      return e.value;
    }
    if (this.#sightings > 1) {
      const seen = (this.#seen.get(key) ?? 0) + 1;
      if (seen < this.#sightings) {
        this.#seen.set(key, seen);
        return NOT_YET;
      }
      this.#seen.delete(key);
    }
    const e = this.#compile(arg, operationName);
    // The cache takes whole bytes only.
    const bytes = Math.ceil(e.bytes) + 2 * key.length;
    // Too large to keep: graphql-js runs it, and the small marker keeps it from being compiled again.
    if (bytes > this.#maxEntryBytes) {
      this.#kept.set(key, this.#oversized, { size: SIGHTING_ENTRY_BYTES + 2 * key.length });
      return this.#oversized;
    }
    this.#kept.set(key, e.value, { size: bytes });
    return e.value;
  }

  stats(): CompiledDocumentsStats {
    return {
      documents: this.#kept.size,
      bytes: this.#kept.calculatedSize,
      trustedDocuments: this.#trustedKept.size,
      trustedBytes: this.#trustedBytes,
    };
  }
}
