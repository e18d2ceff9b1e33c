/**
 * Nomad's vocabulary in the unified model: scalar conversions (integers, times, modes, string
 * maps, topologies) and the status tables. The mappers build on it: `results-volumes.ts`
 * (volumes and claims) and `results-catalog.ts` (plugins, snapshots, provider volumes).
 *
 * Status tables (documented in docs/nomad.md):
 * - Volume: Nomad has no status field. `IN_USE` when any read or write claim is held
 *   (CurrentReaders + CurrentWriters > 0), else `UNAVAILABLE` when not schedulable (plugin has no
 *   healthy nodes, or needs a controller and has none), else `AVAILABLE`. `backendStatus` is
 *   `readers=<n> writers=<n> schedulable=<bool>`.
 * - Attachment (a claim): from the claiming allocation, see {@link attachmentState}.
 */
import type { AccessMode, AttachmentMode, AttachmentState, Topology, VolumeStatus } from '../../contract/model';
import { sortedPairs } from '../../contract/key-values';
import type { Int, WireAllocStub, WireTopology } from './types';

// ---- modes --------------------------------------------------------------------------------

const ACCESS_MODES: Record<string, AccessMode> = {
  'single-node-reader-only': 'SINGLE_NODE_READER_ONLY',
  'single-node-writer': 'SINGLE_NODE_WRITER',
  'multi-node-reader-only': 'MULTI_NODE_READER_ONLY',
  'multi-node-single-writer': 'MULTI_NODE_SINGLE_WRITER',
  'multi-node-multi-writer': 'MULTI_NODE_MULTI_WRITER',
};
const ATTACHMENT_MODES: Record<string, AttachmentMode> = { 'file-system': 'FILE_SYSTEM', 'block-device': 'BLOCK_DEVICE' };

/** Unified → Nomad access mode (for request bodies). */
export const NOMAD_ACCESS_MODE: Record<AccessMode, string> = Object.fromEntries(Object.entries(ACCESS_MODES).map(([k, v]) => [v, k])) as Record<AccessMode, string>;
/** Unified → Nomad attachment mode (for request bodies). */
export const NOMAD_ATTACHMENT_MODE: Record<AttachmentMode, string> = { FILE_SYSTEM: 'file-system', BLOCK_DEVICE: 'block-device' };

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
export const secondsToIso = (v: Int | null | undefined): string | null => (v ? new Date(Number(v) * 1000).toISOString() : null);

export const topology = (t: WireTopology | null | undefined): Topology => ({ segments: sortedPairs(t?.Segments) });
export const topologies = (ts: WireTopology[] | null | undefined): Topology[] => (ts ?? []).map(topology);

// ---- status tables ------------------------------------------------------------------------

/** Volume status table (see the module comment). */
export function volumeStatus(readers: number, writers: number, schedulable: boolean): VolumeStatus {
  if (readers + writers > 0) return 'IN_USE';
  return schedulable ? 'AVAILABLE' : 'UNAVAILABLE';
}

/**
 * Claim state from the claiming allocation. A claim stays in ReadAllocs/WriteAllocs until Nomad
 * has unpublished it (backends.md 1.6.3), so a stopped or collected allocation is DETACHING:
 * - no allocation stub (garbage-collected, claim not yet freed) → DETACHING
 * - client `pending` → ATTACHING
 * - client `running`, desired `run` → ATTACHED; desired `stop`/`evict` → DETACHING
 * - client `complete` / `failed` / `lost` → DETACHING
 * - client `unknown` (node disconnected) or anything else → ERROR
 */
export function attachmentState(a: WireAllocStub | undefined): AttachmentState {
  if (!a) return 'DETACHING';
  switch (a.ClientStatus) {
    case 'pending':
      return a.DesiredStatus === 'run' ? 'ATTACHING' : 'DETACHING';
    case 'running':
      return a.DesiredStatus === 'run' ? 'ATTACHED' : 'DETACHING';
    case 'complete':
    case 'failed':
    case 'lost':
      return 'DETACHING';
    default:
      return 'ERROR';
  }
}

/** Why {@link attachmentState} said ERROR; null for every other state. */
export function attachmentStateReason(a: WireAllocStub | undefined): string | null {
  if (!a || attachmentState(a) !== 'ERROR') return null;
  return a.ClientStatus === 'unknown'
    ? `allocation "${a.ID}" has client status "unknown": its node is disconnected, so the claim's state cannot be known`
    : `allocation "${a.ID}" has client status "${a.ClientStatus}", which this gateway does not know`;
}
