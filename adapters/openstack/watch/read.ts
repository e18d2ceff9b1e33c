/**
 * What one poll of the OpenStack watcher reads, with the gateway's service session: every page of
 * Cinder's volume list-detail (of every project with `all_tenants` when the session is an admin's,
 * else of its own project), and Nova's attachment lists of a few servers.
 */
import type { CallOptions } from '../../contract/call-options';
import { isStatus } from '../../contract/errors';
import { mapWithConcurrency } from '../../http/concurrency';
import type { Volume } from '../../contract/model';
import type { OpenStackClient } from '../client';
import * as cinder from '../cinder/requests';
import { nextMarker, toVolume } from '../cinder/results';
import { isAdminSession, type Session } from '../keystone';
import * as nova from '../nova/requests';
import type { NovaVolumeAttachment } from '../nova/results';
import { UUID } from '../ids';
import { MAX_LIMIT } from '../paging';

/** Most pages one listing follows (1000 × 1000 volumes): a guard against a marker loop. */
const MAX_PAGES = 1000;
/** A listing restarts from the first page when its marker vanished mid-way (deleted), at most this often. */
const MAX_RESTARTS = 2;
/** Nova lists read at once. */
const NOVA_CONCURRENCY = 4;

/** What the watcher's session covers. */
export interface WatchScope {
  /** Every project (`all_tenants`): the service user is an admin. */
  allProjects: boolean;
  /** The session's own project. */
  projectId: string;
}

export const scopeOf = (s: Session): WatchScope => ({ allProjects: isAdminSession(s), projectId: s.projectId });

/**
 * Every volume the scope covers, by lower-case id, with the number of calls made. Pages by marker
 * (sorted by creation, then id, so volumes created meanwhile come last); a marker deleted between
 * two pages (Cinder: 404) restarts the listing.
 */
export async function listEveryVolume(
  client: OpenStackClient,
  scope: WatchScope,
  o: CallOptions,
  pageSize = MAX_LIMIT,
): Promise<{ volumes: Map<string, Volume>; calls: number }> {
  let calls = 0;
  for (let attempt = 0; ; attempt++) {
    const volumes = new Map<string, Volume>();
    let marker: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        calls++;
        const { data } = await cinder.listVolumesDetail(
          client,
          { limit: pageSize, marker, allProjects: scope.allProjects },
          o,
        );
        const list = data?.volumes ?? [];
        for (const v of list) volumes.set(v.id.toLowerCase(), toVolume(client.backend, scope.projectId, v));
        const next = nextMarker(list, data?.volumes_links);
        if (next === null || next === marker) return { volumes, calls };
        marker = next;
      }
      return { volumes, calls };
    } catch (err) {
      if (marker !== undefined && isStatus(err, 404) && attempt < MAX_RESTARTS) continue;
      throw err;
    }
  }
}

/**
 * Nova's attachment lists of `servers` (lower-case ids). A server Nova does not know (deleted, or
 * another project's for a non-admin session) lists nothing.
 */
export async function readServerLists(
  client: OpenStackClient,
  servers: readonly string[],
  o: CallOptions,
): Promise<Map<string, NovaVolumeAttachment[]>> {
  const valid = servers.filter((s) => UUID.test(s));
  const lists = await mapWithConcurrency(valid, NOVA_CONCURRENCY, async (id) => {
    try {
      return (await nova.listServerVolumeAttachments(client, id, o)).data?.volumeAttachments ?? [];
    } catch (err) {
      if (isStatus(err, 404)) return [];
      throw err;
    }
  });
  return new Map(valid.map((id, i) => [id, lists[i]!] as const));
}
