/** String maps on the wire (Cinder metadata, Nomad's Go maps) ↔ the model's key-value pairs. */
import type { KeyValue } from './model';

/** A wire string map → pairs sorted by key (neither JSON objects nor Go maps promise an order). */
export const sortedPairs = (m: Record<string, string> | null | undefined): KeyValue[] =>
  Object.entries(m ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value: String(value) }));

/** Pairs → the string map a backend stores (a later pair wins over an earlier one with its key). */
export const stringMap = (kv: readonly KeyValue[]): Record<string, string> =>
  Object.fromEntries(kv.map((p) => [p.key, p.value]));
