/**
 * View-only entries: a volume can change with no event to send (`updatedAt`, `backendStatus`,
 * indexes; docs/subscriptions.md, "One event per transition"). With several replicas the holder
 * appends those changes too, marked `viewOnly` and never delivered, so every replica's follower
 * view answers the same (docs/scaling.md).
 */
import type { VolumeDelta } from '../../adapters/contract/watch';
import { volumeGlobalId } from './diff';
import type { ChangeInput } from './types';

/** The deltas whose volume changed with no change to send, as view-only entries (other replicas' views). */
export function viewOnly(deltas: readonly VolumeDelta[], changes: readonly ChangeInput[]): ChangeInput[] {
  const said = new Set(changes.map((c) => c.volumeId));
  return deltas.flatMap((d) => {
    const v = d.after;
    if (!v || said.has(volumeGlobalId(v))) return [];
    const keys = {};
    const base = { attachment: null, attachmentId: null, previousStatus: null, previousAttachmentState: null, keys };
    return [
      {
        ...base,
        type: 'UPDATED' as const,
        backend: v.ref.backend,
        scope: v.ref.namespace,
        volumeId: volumeGlobalId(v),
        volume: v,
        changedFields: [],
        observedAt: d.observedAt,
        viewOnly: true,
      },
    ];
  });
}
