/**
 * Which subscription stream an HTTP request asks for, read from its `Accept` header: GraphQL over
 * SSE (`text/event-stream`, the graphql-sse protocol's distinct connections mode) or Apollo's
 * multipart subscriptions (`multipart/mixed` with `subscriptionSpec=1.0`). The first acceptable
 * media range wins; `q=0` refuses one. `multipart/mixed` without `subscriptionSpec` (the
 * `@defer` spec) is not a subscription stream.
 */

/** The stream protocols served. */
export type StreamKind = 'sse' | 'multipart';

/** The stream the header asks for, or undefined (plain JSON: subscriptions are refused). */
export function streamKindOf(accept: string | string[] | undefined): StreamKind | undefined {
  const text = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  for (const range of text.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim());
    const p = new Map<string, string>();
    for (const kv of params) {
      const i = kv.indexOf('=');
      if (i > 0) p.set(kv.slice(0, i).trim().toLowerCase(), kv.slice(i + 1).trim().replace(/^"(.*)"$/, '$1'));
    }
    if (p.has('q') && Number(p.get('q')) === 0) continue;
    const t = type.toLowerCase();
    if (t === 'text/event-stream') return 'sse';
    if (t === 'multipart/mixed' && p.get('subscriptionspec') === '1.0') return 'multipart';
  }
  return undefined;
}
