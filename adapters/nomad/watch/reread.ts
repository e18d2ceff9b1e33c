/**
 * The Nomad watcher's re-reads (docs/nomad.md "Watching"): the volumes an event, a list or a nudge
 * named, read in full with the service token, at most `concurrency` at a time in one span
 * (docs/tracing.md), and recorded in the view. A 404 is a deletion; a failed read is marked to be
 * read again (`dirty.ts`).
 */
import type { CallOptions } from '../../contract/call-options';
import { NotFoundError } from '../../contract/errors';
import type { VolumeRef } from '../../contract/model';
import type { VolumeDelta } from '../../contract/watch';
import { mapSettled } from '../../http/concurrency';
import { GatewayAttr, inBackgroundSpan } from '../../http/tracing';
import type { NomadClient } from '../client';
import * as req from '../volumes/requests';
import { toVolume } from '../volumes/results';
import type { DirtyVolumes } from './dirty';
import type { WatchView } from './view';

/** What a re-read uses: the watcher's backend, pooled client, view and dirty set. */
export interface RereadParts {
  backend: string;
  client: NomadClient;
  view: WatchView;
  dirty: DirtyVolumes;
  /** Reads at once. */
  concurrency: number;
}

/** Reads `refs` in full and records them: the view's deltas, and the last failure (null when every read answered). */
export async function rereadVolumes(
  p: RereadParts,
  refs: readonly VolumeRef[],
  o: CallOptions,
): Promise<{ deltas: VolumeDelta[]; failed: unknown }> {
  const results = await inBackgroundSpan(
    're-read volumes',
    { [GatewayAttr.backend]: p.backend, [GatewayAttr.watcherVolumes]: refs.length },
    () =>
      mapSettled(refs, p.concurrency, async (ref) => {
        try {
          const { data } = await req.readVolume(p.client, ref.nativeId, ref.namespace, o);
          return data ? toVolume(p.backend, data) : null;
        } catch (err) {
          if (err instanceof NotFoundError) return null;
          throw err;
        }
      }),
  );
  const deltas: VolumeDelta[] = [];
  const observedAt = new Date().toISOString();
  let failed: unknown = null;
  results.forEach((r, i) => {
    if (r instanceof Error) {
      failed = r;
      p.dirty.markFailed(refs[i]!);
      return;
    }
    const d = p.view.apply(refs[i]!, r, observedAt);
    if (d) deltas.push(d);
  });
  return { deltas, failed };
}
