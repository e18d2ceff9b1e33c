/**
 * The one extra read of a doctor pass: Nova's servers with the volumes each lists
 * (`GET /servers/detail`, `os-extended-volumes:volumes_attached`), every page, across projects
 * (`all_tenants`) when the service user is an admin. Only what the API reference documents is
 * read, so the checks hold against a real Nova.
 */
import type { CallOptions } from '../../contract/call-options';
import { isStatus } from '../../contract/errors';
import type { OpenStackClient } from '../client';
import { isAdminSession } from '../keystone';
import * as nova from '../nova/requests';
import { nextServerMarker, toServer } from '../nova/results';
import { MAX_LIMIT } from '../paging';

/** One server as the listing shows it. */
export interface ServerFacts {
  /** Lower-case. */
  id: string;
  projectId: string;
  /** Nova's status (`ACTIVE`, `SHELVED_OFFLOADED` …). */
  status: string;
  /** Lower-case volume ids of its block device mappings. */
  volumeIds: readonly string[];
}

/** What one pass read of Nova. */
export interface NovaFacts {
  /**
   * The listing covers every project (an admin's): a server it lacks does not exist. Otherwise it
   * covers `projectId` only, and a server it lacks may be deleted or in another project.
   */
  allProjects: boolean;
  /** The service session's project. */
  projectId: string;
  /** By lower-case server id. */
  servers: ReadonlyMap<string, ServerFacts>;
  /** By lower-case volume id: the servers whose mappings list it. */
  holders: ReadonlyMap<string, readonly string[]>;
  /** The listing's pages (each one call). */
  pages: number;
}

/** Most pages one listing follows: a guard against a marker loop. */
const MAX_PAGES = 1000;
/** A listing restarts when its marker server was deleted between two pages (Nova: 400), at most this often. */
const MAX_RESTARTS = 2;

/** Nova's servers with their volumes, read with the service credential in `o`. */
export async function readNovaFacts(client: OpenStackClient, o: CallOptions, pageSize = MAX_LIMIT): Promise<NovaFacts> {
  const session = await client.session(o);
  const allProjects = isAdminSession(session);
  let pages = 0;
  for (let attempt = 0; ; attempt++) {
    const servers = new Map<string, ServerFacts>();
    let marker: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        pages++;
        const { data } = await nova.listServersDetail(client, { limit: pageSize, marker, allProjects }, o);
        for (const view of data?.servers ?? []) {
          const s = toServer(client.backend, session.projectId, view);
          const id = s.id.toLowerCase();
          servers.set(id, {
            id,
            projectId: s.projectId,
            status: s.status,
            volumeIds: s.volumeIds.map((v) => v.toLowerCase()),
          });
        }
        const next = nextServerMarker(data);
        if (next === null || next === marker) break;
        marker = next;
      }
      return { allProjects, projectId: session.projectId, servers, holders: holdersOf(servers), pages };
    } catch (err) {
      if (marker !== undefined && (isStatus(err, 400) || isStatus(err, 404)) && attempt < MAX_RESTARTS) continue;
      throw err;
    }
  }
}

function holdersOf(servers: ReadonlyMap<string, ServerFacts>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of servers.values()) for (const v of s.volumeIds) out.set(v, [...(out.get(v) ?? []), s.id]);
  return out;
}

/** Whether a server whose mappings list `volumeId` is shelved-offloaded (its volumes are `reserved` by design). */
export const heldByShelvedOffloaded = (facts: NovaFacts, volumeId: string): boolean =>
  (facts.holders.get(volumeId) ?? []).some((s) => facts.servers.get(s)?.status === 'SHELVED_OFFLOADED');
