/**
 * Content negotiation for `GET /graphql`: a browser navigating there gets the IDE, every other
 * client (curl's `*\/*`, GraphQL clients asking for JSON) goes on to Apollo.
 */

const JSON_TYPES = new Set(['application/json', 'application/graphql-response+json']);

/**
 * True when `text/html` is listed explicitly and ranks strictly above both JSON types. A tie
 * goes to JSON, as in Apollo's own landing-page rule, so an API client is never handed HTML;
 * wildcards count for neither side, so `Accept: *\/*` (curl) is not a browser.
 */
export function prefersHtml(accept: string | string[] | undefined): boolean {
  if (accept === undefined) return false;
  let html = 0;
  let json = 0;
  for (const range of (Array.isArray(accept) ? accept.join(',') : accept).split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/html') html = Math.max(html, q);
    else if (JSON_TYPES.has(type)) json = Math.max(json, q);
  }
  return html > 0 && html > json;
}
