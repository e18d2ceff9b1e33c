/**
 * The one origin rule (issue 27, item 9; docs/conformance.md, "Browser origins"): which browser
 * pages may use the gateway. A request without `Origin` is not a browser page's cross-origin
 * request (non-browser clients, same-origin GETs) and is always allowed; a page from the gateway's
 * own origin is allowed; any other origin only when listed. The list is one for every transport:
 * `CORS_ORIGINS` and `WS_ALLOWED_ORIGINS` together, and in demo mode every loopback origin too (a
 * page from a local dev server; the demo holds demo data only and listens on loopback).
 *
 * Every transport asks it: graphql-ws upgrades (server/ws/upgrade.ts) and SSE and multipart
 * subscription streams over GET and POST (server/streams/) are refused 403 `ORIGIN_NOT_ALLOWED`
 * before any work for an origin it does not allow, and CORS (server/http/cors.ts) grants its
 * headers to the origins it lists. Queries and mutations over HTTP from another origin are
 * answered as before: without CORS headers the browser hides the answer from the page, and CSRF
 * prevention (server/http/csrf.ts) refuses the requests a page can send without a preflight.
 */

/** `extensions.code` of a refusal. */
export const ORIGIN_NOT_ALLOWED = 'ORIGIN_NOT_ALLOWED';

/** The message of a refusal, the same on every transport. */
export const ORIGIN_REFUSAL_MESSAGE =
  "this browser origin may not use the gateway: it is neither the gateway's own (the request's Host) nor listed in CORS_ORIGINS or WS_ALLOWED_ORIGINS";

/** The refusal's body, as the HTTP edge answers its errors (one GraphQL error, no `data`). */
export const originRefusalBody = (): { errors: Array<{ message: string; extensions: { code: string } }> } => ({
  errors: [{ message: ORIGIN_REFUSAL_MESSAGE, extensions: { code: ORIGIN_NOT_ALLOWED } }],
});

/** Whether `host` (a name or address, IPv6 bare or in brackets) is a loopback one: only this machine reaches it. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/** Whether `origin` is an http(s) page served from this machine (a loopback host, any port). */
function isLoopbackOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHost(u.hostname);
  } catch {
    return false;
  }
}

export class OriginRule {
  readonly #listed: ReadonlySet<string>;
  readonly #loopback: boolean;

  /**
   * @param listed browser origins allowed besides the gateway's own (`scheme://host[:port]`), or `*` for any
   * @param loopback whether every loopback origin (`http://localhost:<any port>`, `127.x`, `[::1]`) is listed too: demo mode's rule
   */
  constructor(listed: readonly string[], loopback = false) {
    this.#listed = new Set(listed);
    this.#loopback = loopback;
  }

  /**
   * The rule of a configuration: `CORS_ORIGINS` and `WS_ALLOWED_ORIGINS` as one list, and in demo
   * mode (`loopback`) every page served from this machine, so an app on a local dev server can use the demo.
   */
  static of(corsOrigins: readonly string[], wsAllowedOrigins: readonly string[], loopback = false): OriginRule {
    return new OriginRule([...corsOrigins, ...wsAllowedOrigins], loopback);
  }

  /** Whether any origin is listed (CORS is off otherwise). */
  get listsAny(): boolean {
    return this.#loopback || this.#listed.size > 0;
  }

  /** Whether `*` is listed: every origin is. */
  get wildcard(): boolean {
    return this.#listed.has('*');
  }

  /** Whether `origin` is listed (or `*` is, or it is a loopback one and those are). */
  listed(origin: string): boolean {
    return this.wildcard || this.#listed.has(origin) || (this.#loopback && isLoopbackOrigin(origin));
  }

  /**
   * Whether a request with this `Origin` header, sent to `host` (its `Host` header), may use the
   * gateway: no `Origin`, a listed one, or the gateway's own, i.e. its host and port are `host`.
   * The scheme is not compared: behind a TLS-terminating proxy the gateway cannot know it.
   */
  allows(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    if (this.listed(origin)) return true;
    let u: URL;
    try {
      u = new URL(origin);
    } catch {
      return false;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !host) return false;
    const withPort = (h: string, scheme: string): string =>
      /:\d+$/.test(h) ? h : `${h}:${scheme === 'https:' ? 443 : 80}`;
    return withPort(u.host.toLowerCase(), u.protocol) === withPort(host.trim().toLowerCase(), u.protocol);
  }
}
