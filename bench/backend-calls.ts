/**
 * The benchmark's calls to the simulated backends themselves, past the gateway: a backend's JSON
 * answer, and each simulator's request log (cleared, read, every logged call as the request direct
 * REST replays, with the same credential).
 */
import type { Pool } from 'undici';

/** A backend's answer as JSON; anything but 200 throws with the start of the body. */
export async function body(res: { statusCode: number; body: { text(): Promise<string> } }): Promise<unknown> {
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** One simulator as the benchmark sees it: its request log, its process, and how a logged call is replayed. */
export interface Backend {
  pid: number;
  clearLog(): Promise<void>;
  log(): Promise<Array<{ method: string; url: string; headers: Record<string, string> }>>;
}

/** The Nomad simulator (process `pid`, its log read through `simPool`); logged calls are replayed with `auth`. */
export function nomadBackend(pid: number, simPool: Pool, simUrl: string, auth: Record<string, string>): Backend {
  return {
    pid,
    clearLog: () =>
      simPool
        .request({ method: 'DELETE', path: '/_sim/requests' })
        .then((r) => r.body.text())
        .then(() => undefined),
    log: async () =>
      (
        (await body(await simPool.request({ method: 'GET', path: '/_sim/requests' }))) as Array<{
          method: string;
          rawPath: string;
        }>
      ).map((e) => ({
        method: e.method,
        url: new URL(e.rawPath, simUrl).href,
        headers: auth,
      })),
  };
}

/**
 * The OpenStack simulator (process `pid`): one log for Keystone, Cinder and Nova, read through
 * `keystonePool`; logged calls are replayed at each service's origin (`origins`, by service) with
 * `auth` and the microversion the gateway sent.
 */
export function openstackBackend(
  pid: number,
  keystonePool: Pool,
  origins: Record<string, string>,
  auth: Record<string, string>,
): Backend {
  return {
    pid,
    clearLog: () =>
      keystonePool
        .request({ method: 'DELETE', path: '/_sim/requests' })
        .then((r) => r.body.text())
        .then(() => undefined),
    log: async () =>
      (
        (await body(await keystonePool.request({ method: 'GET', path: '/_sim/requests' }))) as Array<{
          service: string;
          method: string;
          path: string;
          query: string;
          microversion: string | null;
        }>
      ).map((e) => ({
        method: e.method,
        url: `${origins[e.service]}${e.path}${e.query ? `?${e.query}` : ''}`,
        headers: { ...auth, ...(e.microversion ? { 'openstack-api-version': e.microversion } : {}) },
      })),
  };
}
