/**
 * Callers' credentials, taken from GraphQL request headers and passed through to backends:
 * - `X-Nomad-Token: <secret>`: sent to every Nomad backend;
 * - `X-Nomad-Token-<backend-id>: <secret>`: sent to that backend only (wins over the former);
 * - `X-Auth-Token: <keystone token>`: every OpenStack backend;
 * - `X-Auth-Token-<backend-id>: <keystone token>`: that OpenStack backend only.
 * The gateway's own configured tokens are never used for callers' requests.
 */
import type { CallerCredential } from '../adapters/contract/backend';
import { checkHeaderValue } from '../adapters/http/headers';
import type { BackendRegistry } from './registry';

export type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null | undefined };

/**
 * The trimmed value, checked here where the caller gave it: a token is sent on as a header, so
 * one that is not printable Latin-1 is BAD_USER_INPUT naming the header (never its value).
 */
function read(h: Headers, name: string): string | undefined {
  const v = typeof (h as { get?: unknown }).get === 'function' ? (h as { get(n: string): string | null | undefined }).get(name) : (h as Record<string, string | string[] | undefined>)[name];
  const s = Array.isArray(v) ? v[0] : v;
  const t = s?.trim();
  if (!t) return undefined;
  checkHeaderValue(`header ${name}`, t);
  return t;
}

/**
 * Credential per backend id for one request.
 * @throws BadUserInputError when a credential header the backends would be sent is not printable Latin-1
 */
export function credentialsFromHeaders(h: Headers, registry: BackendRegistry): Map<string, CallerCredential> {
  const nomad = read(h, 'x-nomad-token');
  const keystone = read(h, 'x-auth-token');
  const out = new Map<string, CallerCredential>();
  for (const b of registry.all) {
    const id = b.id.toLowerCase();
    const token = b.kind === 'NOMAD' ? (read(h, `x-nomad-token-${id}`) ?? nomad) : (read(h, `x-auth-token-${id}`) ?? keystone);
    out.set(b.id, { token });
  }
  return out;
}
