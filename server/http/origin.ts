/**
 * The one origin rule (issue 27, item 9; docs/conformance.md, "Browser origins"): which browser
 * pages may use the gateway. A request without `Origin` is not a browser page's cross-origin
 * request (non-browser clients, same-origin GETs) and is always allowed; a page from the gateway's
 * own origin is allowed; any other origin only when listed. The list is one for every transport:
 * `CORS_ORIGINS` and `WS_ALLOWED_ORIGINS` together.
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

export class OriginRule {
  readonly #listed: ReadonlySet<string>;

  /** @param listed browser origins allowed besides the gateway's own (`scheme://host[:port]`), or `*` for any */
  constructor(listed: readonly string[]) {
    this.#listed = new Set(listed);
  }

  /** The rule of a configuration: `CORS_ORIGINS` and `WS_ALLOWED_ORIGINS` as one list. */
  static of(corsOrigins: readonly string[], wsAllowedOrigins: readonly string[]): OriginRule {
    return new OriginRule([...corsOrigins, ...wsAllowedOrigins]);
  }

  /** Whether any origin is listed (CORS is off otherwise). */
  get listsAny(): boolean {
    return this.#listed.size > 0;
  }

  /** Whether `*` is listed: every origin is. */
  get wildcard(): boolean {
    return this.#listed.has('*');
  }

  /** Whether `origin` is listed (or `*` is). */
  listed(origin: string): boolean {
    return this.wildcard || this.#listed.has(origin);
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
