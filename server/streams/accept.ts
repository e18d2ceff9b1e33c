/**
 * Which subscription stream an HTTP request asks for, read from its `Accept` header: GraphQL over
 * SSE (`text/event-stream`, the graphql-sse protocol's distinct connections mode) or Apollo's
 * multipart subscriptions (`multipart/mixed` with `subscriptionSpec=1.0`). The first acceptable
 * media range wins; `q=0` refuses one. `multipart/mixed` without `subscriptionSpec` (the
 * `@defer` spec) is not a subscription stream.
 */

/** The stream protocols served. */
export type StreamKind = 'sse' | 'multipart';

type Accept = string | string[] | undefined;

/** The header's acceptable media ranges (`q=0` left out), lower-case types with their parameters. */
function ranges(accept: Accept): Array<{ type: string; params: Map<string, string> }> {
  const text = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  const out: Array<{ type: string; params: Map<string, string> }> = [];
  for (const range of text.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim());
    const p = new Map<string, string>();
    for (const kv of params) {
      const i = kv.indexOf('=');
      if (i > 0)
        p.set(
          kv.slice(0, i).trim().toLowerCase(),
          kv
            .slice(i + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1'),
        );
    }
    if (!(p.has('q') && Number(p.get('q')) === 0)) out.push({ type: type.toLowerCase(), params: p });
  }
  return out;
}

/** The stream the header asks for, or undefined (plain JSON: subscriptions are refused). */
export function streamKindOf(accept: Accept): StreamKind | undefined {
  for (const { type, params } of ranges(accept)) {
    if (type === 'text/event-stream') return 'sse';
    if (type === 'multipart/mixed' && params.get('subscriptionspec') === '1.0') return 'multipart';
  }
  return undefined;
}

const JSON_TYPES = new Set(['application/json', 'application/graphql-response+json', 'application/*', '*/*']);

/**
 * Whether a query's or mutation's answer must be an event stream: the header accepts SSE and no
 * JSON answer (graphql-sse's client sends every operation with `Accept: text/event-stream` alone).
 */
export function wantsEventsOnly(accept: Accept): boolean {
  const all = ranges(accept);
  return all.some((r) => r.type === 'text/event-stream') && !all.some((r) => JSON_TYPES.has(r.type));
}
