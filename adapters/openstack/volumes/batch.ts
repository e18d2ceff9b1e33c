/**
 * The batch strategy: many volumes (or servers) of the caller's project read with as few calls
 * as the services allow. Below a threshold, parallel shows; from it, one list-detail page of the
 * project (1000) and a pick, then shows for what the page lacks. So a batch costs at most
 * 1 + (misses) calls however large the project.
 */
import type { CallOptions } from '../../contract/call-options';
import { mapSettled, mapWithConcurrency } from '../../http/concurrency';
import type { ComputeServer, Volume, VolumeRef } from '../../contract/model';
import * as cinder from '../cinder/requests';
import { toVolume, type CinderVolume } from '../cinder/results';
import { orNull, type OpenStackContext } from '../context';
import { UUID } from '../ids';
import * as nova from '../nova/requests';
import { toServer } from '../nova/results';
import { MAX_LIMIT } from '../paging';
import { getVolume } from './operations';

/**
 * Batch sizes from which one list-detail page is read instead of N parallel shows. On the
 * simulator shows stay faster up to 16-32 ids (bench/RESULTS.md, "OpenStack batch strategy"), but
 * every show is an API request with its own token check and database read on the cloud (about
 * 20 ms each on the recorded Cinder), so from 8 ids the gateway trades a little latency for a
 * bounded call count: one list call instead of up to N.
 */
export const LIST_STRATEGY_THRESHOLD = { volumes: 8, servers: 8 } as const;

/** Most shows (or per-server lists) of one batch in flight at once (the pool caps connections on top). */
export const SHOW_CONCURRENCY = 8;

/** Full reads of volumes, one value or Error per ref, in order. */
export async function getVolumes(
  ctx: OpenStackContext,
  refs: readonly VolumeRef[],
  o: CallOptions,
  concurrency: number,
): Promise<Array<Volume | null | Error>> {
  let listed: Awaited<ReturnType<typeof firstVolumePage>> | null = null;
  if (refs.length >= LIST_STRATEGY_THRESHOLD.volumes) {
    try {
      listed = await firstVolumePage(ctx, o);
    } catch (err) {
      // The one list failed for every ref alike: an Error per ref, as with shows, never a rejection.
      const e = err instanceof Error ? err : new Error(String(err));
      return refs.map(() => e);
    }
  }
  return mapSettled(refs, concurrency, async (r) => {
    // A token sees only its own project: a ref in another is absent, as a show would say.
    if (listed && r.namespace !== listed.projectId) return null;
    const hit = listed?.volumes.get(r.nativeId.toLowerCase());
    // Only the volumes asked for are mapped, not the whole page.
    return hit ? toVolume(ctx.backend, listed!.projectId, hit) : getVolume(ctx, r, o);
  });
}

/** The caller project's first 1000 volumes with details, by id, as Cinder sent them. */
async function firstVolumePage(
  ctx: OpenStackContext,
  o: CallOptions,
): Promise<{ projectId: string; volumes: Map<string, CinderVolume> }> {
  const { projectId } = await ctx.client.session(o);
  const { data } = await cinder.listVolumesDetail(ctx.client, { limit: MAX_LIMIT }, o);
  return { projectId, volumes: new Map((data?.volumes ?? []).map((v) => [v.id, v] as const)) };
}

/** Servers by id, keyed as asked (only UUIDs can exist); missing ids are absent from the answer. */
export async function getServers(
  ctx: OpenStackContext,
  ids: readonly string[],
  o: CallOptions,
): Promise<Map<string, ComputeServer>> {
  const { projectId } = await ctx.client.session(o);
  const valid = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  const listed =
    valid.length >= LIST_STRATEGY_THRESHOLD.servers
      ? new Map(
          ((await nova.listServersDetail(ctx.client, { limit: MAX_LIMIT }, o)).data?.servers ?? []).map(
            (s) => [s.id, s] as const,
          ),
        )
      : null;
  const found = await mapWithConcurrency(
    valid,
    SHOW_CONCURRENCY,
    async (id) => listed?.get(id) ?? (await orNull(nova.showServer(ctx.client, id, o)))?.data?.server ?? null,
  );
  const byId = new Map(valid.map((id, i) => [id, found[i]] as const));
  const out = new Map<string, ComputeServer>();
  for (const id of ids) {
    const s = UUID.test(id) ? byId.get(id.toLowerCase()) : null;
    if (s) out.set(id, toServer(ctx.backend, projectId, s));
  }
  return out;
}
