/** Ages, as the memory checks count them: from the backend's own time where it has one, else from when the doctor first saw the condition. */
import type { DiagnosisContext } from '../../contract/diagnosis';
import type { VolumeRef } from '../../contract/model';

/** ms since epoch of an RFC 3339 time; null when absent or unreadable. */
export const millis = (t: string | null | undefined): number | null => {
  if (!t) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
};

export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * When a condition started: the backend's time `at` when it has one, else when the doctor first saw
 * it (`condition` names it for `firstSeen`; asked every pass, so the doctor keeps it).
 */
export function since(ctx: DiagnosisContext, ref: VolumeRef, condition: string, at: number | null): number {
  const seen = ctx.firstSeen(ref, condition);
  return at ?? seen;
}
