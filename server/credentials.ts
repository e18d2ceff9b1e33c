/**
 * Callers' credentials, taken from GraphQL request headers (or graphql-ws `connection_init` keys)
 * and passed through to backends. Each kind's module names its header (adapters/<kind>/module.ts,
 * `credential.header`, e.g. `X-<Kind>-Token`):
 * - `<header>: <secret>`: sent to every backend of that kind;
 * - `<header>-<backend-id>: <secret>`: sent to that backend only (wins over the former).
 * The gateway's own configured tokens are never used for callers' requests.
 */
import type { CallerCredential } from '../adapters/contract/call-options';
import { checkHeaderValue } from '../adapters/contract/header-value';
import { perBackendHeader } from '../adapters/contract/module';
import { BACKEND_MODULES, moduleForBackend } from './kinds';
import type { BackendRegistry } from '../domain/registry';

/** Every kind's credential header, lower case, in registry order (`x-<kind>-token`, …). */
export const CREDENTIAL_HEADERS: readonly string[] = [
  ...new Set(BACKEND_MODULES.map((m) => m.credential.header.toLowerCase())),
];

/** Whether a header (or `connection_init` key) carries a credential: a kind's header, alone or with `-<backend id>`. */
export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return CREDENTIAL_HEADERS.some((h) => n === h || (n.startsWith(`${h}-`) && n.length > h.length + 1));
}

export type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null | undefined };

/**
 * The credential headers among `h` (node:http's lower-case record), lower-case name to its
 * trimmed first value; those sent empty are left out. What a WebSocket keeps of its upgrade
 * request: a few short strings, not the request (~2 KiB a socket).
 */
export function pickCredentialHeaders(
  h: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (!isCredentialHeader(k)) continue;
    const t = (Array.isArray(v) ? v[0] : v)?.trim();
    if (t) out[k.toLowerCase()] = t;
  }
  return out;
}

/**
 * The trimmed value, checked here where the caller gave it: a token is sent on as a header, so
 * one that is not printable Latin-1 is BAD_USER_INPUT naming the header (never its value).
 */
function read(h: Headers, name: string): string | undefined {
  const v =
    typeof (h as { get?: unknown }).get === 'function'
      ? (h as { get(n: string): string | null | undefined }).get(name)
      : (h as Record<string, string | string[] | undefined>)[name];
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
  // Every kind's shared header is checked, whether or not a backend of the kind is configured.
  const shared = new Map(CREDENTIAL_HEADERS.map((name) => [name, read(h, name)]));
  const out = new Map<string, CallerCredential>();
  for (const b of registry.all) {
    const header = moduleForBackend(b).credential.header.toLowerCase();
    const token = read(h, perBackendHeader({ header }, b.id.toLowerCase())) ?? shared.get(header);
    out.set(b.id, { token });
  }
  return out;
}
