/**
 * Callers' credentials, taken from GraphQL request headers and passed through to backends:
 * - `X-Nomad-Token: <secret>`: sent to every Nomad backend;
 * - `X-Nomad-Token-<backend-id>: <secret>`: sent to that backend only (wins over the former).
 * The gateway's own configured tokens are never used for callers' requests.
 */
import type { CallerCredential } from '../adapters/backend';
import type { BackendRegistry } from './registry';

export type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null | undefined };

function read(h: Headers, name: string): string | undefined {
  const v = typeof (h as { get?: unknown }).get === 'function' ? (h as { get(n: string): string | null | undefined }).get(name) : (h as Record<string, string | string[] | undefined>)[name];
  const s = Array.isArray(v) ? v[0] : v;
  const t = s?.trim();
  return t ? t : undefined;
}

/** Credential per backend id for one request. */
export function credentialsFromHeaders(h: Headers, registry: BackendRegistry): Map<string, CallerCredential> {
  const shared = read(h, 'x-nomad-token');
  const out = new Map<string, CallerCredential>();
  for (const b of registry.all) {
    const own = read(h, `x-nomad-token-${b.id.toLowerCase()}`);
    out.set(b.id, b.kind === 'NOMAD' ? { token: own ?? shared } : { token: own });
  }
  return out;
}
