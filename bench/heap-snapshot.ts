/**
 * Reads a V8 heap snapshot (`.heapsnapshot`, as `--heapsnapshot-signal` writes it) into counts and
 * self sizes per kind of object, so two snapshots can be compared: what N more of something cost.
 */
import { readFileSync } from 'node:fs';

/** How many objects of a kind, and their self sizes in bytes. */
export interface KindTotal {
  count: number;
  bytes: number;
}

/** Node types whose `name` is their content (strings, code), not a constructor: grouped by type alone. */
const CONTENT_NAMED = new Set(['string', 'concatenated string', 'sliced string', 'code', 'number', 'regexp']);

/** Totals per kind: `type:name` (e.g. `object:WebSocket`, `closure:onMessage`, `string:`). */
export function kindTotals(file: string): Map<string, KindTotal> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const totals = new Map<string, KindTotal>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType]!]!;
    const name = CONTENT_NAMED.has(type) ? '' : s.strings[s.nodes[i + iName]!]!.slice(0, 60);
    const key = `${type}:${name}`;
    const t = totals.get(key) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += s.nodes[i + iSize]!;
    totals.set(key, t);
  }
  return totals;
}

/** Per unit (`after − before`, divided by `units`), largest first. */
export function perUnit(
  before: Map<string, KindTotal>,
  after: Map<string, KindTotal>,
  units: number,
): Array<{ kind: string; count: number; bytes: number }> {
  const rows: Array<{ kind: string; count: number; bytes: number }> = [];
  for (const [kind, a] of after) {
    const b = before.get(kind) ?? { count: 0, bytes: 0 };
    rows.push({ kind, count: (a.count - b.count) / units, bytes: (a.bytes - b.bytes) / units });
  }
  for (const [kind, b] of before)
    if (!after.has(kind)) rows.push({ kind, count: -b.count / units, bytes: -b.bytes / units });
  return rows.sort((x, y) => y.bytes - x.bytes);
}
