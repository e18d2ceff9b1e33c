/** CORS preflights as browsers send them, for the preflight tests over HTTP and in Chromium. */

/** What browser apps add to their requests: W3C trace context and baggage, Apollo Client's headers. */
export const BROWSER_HEADERS: readonly string[] = [
  'traceparent',
  'tracestate',
  'baggage',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
];

/** A browser's preflight for a POST from `origin` carrying `headers`. */
export const preflight = (url: string, origin: string, headers: readonly string[]): Promise<Response> =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': headers.join(', '),
    },
  });

/** The names in a preflight answer's `Access-Control-Allow-Headers`. */
export const allowedHeaders = (r: Response): string[] =>
  (r.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim());

/** What a preflight answered: its status, the origin it allowed, the headers it allowed, its body. */
export async function preflightAnswer(
  url: string,
  origin: string,
  headers: readonly string[],
): Promise<{ origin: string; status: number; allowOrigin: string | null; allowed: string[]; text: string }> {
  const p = await preflight(url, origin, headers);
  const allowOrigin = p.headers.get('access-control-allow-origin');
  return { origin, status: p.status, allowOrigin, allowed: allowedHeaders(p), text: await p.text() };
}

/** Values of {@link BROWSER_HEADERS} as an app sends them (the W3C examples' trace id). */
export const BROWSER_HEADER_VALUES: Readonly<Record<string, string>> = {
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=x',
  baggage: 'team=storage',
  'apollographql-client-name': 'console',
  'apollographql-client-version': '1.2.3',
  'apollo-require-preflight': 'true',
  'x-apollo-operation-name': 'Backends',
};
