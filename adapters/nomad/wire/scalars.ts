/**
 * Nomad's vocabulary in the unified model, shared by every folder of this backend: scalar
 * conversions (integers, times, modes, string maps, topologies). The mappers build on it:
 * `volumes/results.ts` (volumes and claims, with the status tables in `volumes/status.ts`),
 * `snapshots/results.ts` and `plugins/results.ts` (plugins and provider volumes).
 */
import type { AccessMode, AttachmentMode, KeyValue, Topology } from '../../contract/model';
import { sortedPairs, stringMap } from '../../contract/key-values';
import type { Int, WireTopology } from './types';

// ---- modes --------------------------------------------------------------------------------

const ACCESS_MODES: Record<string, AccessMode> = {
  'single-node-reader-only': 'SINGLE_NODE_READER_ONLY',
  'single-node-writer': 'SINGLE_NODE_WRITER',
  'multi-node-reader-only': 'MULTI_NODE_READER_ONLY',
  'multi-node-single-writer': 'MULTI_NODE_SINGLE_WRITER',
  'multi-node-multi-writer': 'MULTI_NODE_MULTI_WRITER',
};
const ATTACHMENT_MODES: Record<string, AttachmentMode> = {
  'file-system': 'FILE_SYSTEM',
  'block-device': 'BLOCK_DEVICE',
};

/** Unified → Nomad access mode (for request bodies). */
export const NOMAD_ACCESS_MODE: Record<AccessMode, string> = Object.fromEntries(
  Object.entries(ACCESS_MODES).map(([k, v]) => [v, k]),
) as Record<AccessMode, string>;
/** Unified → Nomad attachment mode (for request bodies). */
export const NOMAD_ATTACHMENT_MODE: Record<AttachmentMode, string> = {
  FILE_SYSTEM: 'file-system',
  BLOCK_DEVICE: 'block-device',
};

/** Nomad access mode → unified; `""` (no claim) and unknown words → null. */
export const accessMode = (s: string): AccessMode | null => ACCESS_MODES[s] ?? null;
/** Nomad attachment mode → unified; `""` and unknown words → null. */
export const attachmentMode = (s: string): AttachmentMode | null => ATTACHMENT_MODES[s] ?? null;

// ---- scalars ------------------------------------------------------------------------------

/** Go's zero string means "no value". */
export const nonEmpty = (s: string | null | undefined): string | null => (s ? s : null);

/** A count, index or size as a JS number; values beyond 2^53 (never seen for these fields) lose precision. */
export const num = (v: Int | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/** A size in bytes where Go's 0 means "not set" → null. */
export const bytesOrNull = (v: Int | null | undefined): number | null => num(v) || null;

/** Unix nanoseconds → RFC 3339 with nanoseconds; 0 (never set) → null. Exact for bigint input. */
export function nanosToIso(v: Int | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  const ns = BigInt(v);
  if (ns === 0n) return null;
  const seconds = ns / 1_000_000_000n;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${frac}Z`;
}

/** Unix seconds → RFC 3339; 0 → null. */
export const secondsToIso = (v: Int | null | undefined): string | null =>
  v ? new Date(Number(v) * 1000).toISOString() : null;

export const topology = (t: WireTopology | null | undefined): Topology => ({ segments: sortedPairs(t?.Segments) });
export const topologies = (ts: WireTopology[] | null | undefined): Topology[] => (ts ?? []).map(topology);

/** Pairs → a Go string map (request bodies); none → left out. */
export const goStringMap = (kvs: readonly KeyValue[] | undefined): Record<string, string> | undefined =>
  kvs && kvs.length > 0 ? stringMap(kvs) : undefined;
