/** What every simulator's control API (`/_sim/…`) shares: the JSON object body and the route key. */

export type ControlJson = Record<string, unknown>;

/** The body as a JSON object (`{}` when empty), or the 400 answer to send instead. */
export function parseControlBody(
  rawBody: string,
): { body: ControlJson } | { error: { status: 400; body: { error: string } } } {
  if (rawBody.trim() === '') return { body: {} };
  try {
    const parsed: unknown = JSON.parse(rawBody);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return { body: parsed as ControlJson };
  } catch (e) {
    return { error: { status: 400, body: { error: `invalid JSON body: ${(e as Error).message}` } } };
  }
}

/**
 * `METHOD a/:id/c` for a path relative to `/_sim`, with the second segment as `:id` where
 * `hasId(first segment)` says it is one; `id` is that segment, decoded; `segments` all of them.
 */
export function controlRoute(
  method: string,
  path: string,
  hasId: (collection: string) => boolean = () => true,
): { route: string; id: string; segments: string[] } {
  const seg = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
  const withId = hasId(seg[0] ?? '');
  return {
    route: `${method} ${seg.map((s, i) => (i === 1 && withId ? ':id' : s)).join('/')}`,
    id: seg[1] ?? '',
    segments: seg,
  };
}

/** The answer to a route no `case` took. */
export function unknownControlRoute(
  method: string,
  segments: readonly string[],
): { status: 404; body: { error: string } } {
  return { status: 404, body: { error: `unknown control route: ${method} /_sim/${segments.join('/')}` } };
}

/** The answer to a control call that threw: 404 for an unknown id (`notFound`), else 400. */
export function controlFailure(
  e: unknown,
  notFound: (e: unknown) => boolean,
): { status: 400 | 404; body: { error: string } } {
  return { status: notFound(e) ? 404 : 400, body: { error: (e as Error).message } };
}
