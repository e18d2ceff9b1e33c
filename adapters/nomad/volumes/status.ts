/**
 * Status tables of Nomad volumes and claims (documented in docs/nomad.md):
 * - Volume: Nomad has no status field. `IN_USE` when any read or write claim is held
 *   (CurrentReaders + CurrentWriters > 0), else `UNAVAILABLE` when not schedulable (plugin has no
 *   healthy nodes, or needs a controller and has none), else `AVAILABLE`. `backendStatus` is
 *   `readers=<n> writers=<n> schedulable=<bool>`.
 * - Attachment (a claim): from the claiming allocation, see {@link attachmentState}.
 */
import type { AttachmentState, VolumeStatus } from '../../contract/model';
import type { WireAllocStub } from '../wire/types';

/** Volume status table (see the module comment). */
export function volumeStatus(readers: number, writers: number, schedulable: boolean): VolumeStatus {
  if (readers + writers > 0) return 'IN_USE';
  return schedulable ? 'AVAILABLE' : 'UNAVAILABLE';
}

/**
 * Claim state from the claiming allocation. A claim stays in ReadAllocs/WriteAllocs until Nomad
 * has unpublished it (hashicorp/nomad nomad/structs/csi.go, the claim states; nomad/csi_endpoint.go
 * `Unpublish`), so a stopped or collected allocation is DETACHING:
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
