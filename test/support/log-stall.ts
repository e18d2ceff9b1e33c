/**
 * A stalled log reader against a gateway child process (test/support/gateway-process.ts): its
 * stdout is paused by the test, and requests are sent until the gateway drops log lines.
 */

/** `gateway_log_lines_dropped_total` from `/metrics` at `base` (the gateway's origin). */
export async function droppedLines(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^gateway_log_lines_dropped_total (\S+)/m.exec(text)?.[1] ?? 'NaN');
}

/** A named query of `__typename` to `url`, its answer checked: each one logs a line of about 200 bytes. */
export async function askTypename(url: string, name: string): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `query ${name} { __typename }` }),
  });
  const body = (await res.json()) as unknown;
  if (JSON.stringify(body) !== '{"data":{"__typename":"Query"}}')
    throw new Error(`unexpected answer ${JSON.stringify(body)}`);
}

/** Asks `name` until the gateway has dropped more lines than `before` (20,000 requests is the give-up point). */
export async function stallUntilDropped(url: string, name: string, before: number): Promise<void> {
  const base = url.replace(/\/graphql$/, '');
  for (let sent = 0; (await droppedLines(base)) <= before && sent < 20_000; sent += 100)
    await Promise.all(Array.from({ length: 100 }, () => askTypename(url, name)));
}
