/**
 * One origin rule on every transport (issue 27, item 9; docs/conformance.md, "Browser origins";
 * docs/reliability.md R22): graphql-ws upgrades, SSE and multipart streams over GET and POST,
 * and CORS. A foreign origin gets 403 ORIGIN_NOT_ALLOWED before any stream or socket; an origin
 * listed in CORS_ORIGINS or in WS_ALLOWED_ORIGINS (one list), the gateway's own, and a request
 * without Origin are served. One gateway (real HTTP, its live hub watching a Nomad simulator)
 * for the whole file.
 */
import { startWsGateway, stopAll, SUB, upgradeStatus, type WsGateway } from '../ws/helpers';
import { until } from '../support/until';
import { MULTIPART_ACCEPT, multipartParts, openStream, sseEvents, SSE_ACCEPT, typeOf, type RawStream } from './helpers';

const FOREIGN = 'https://evil.example.net';
/** Listed in CORS_ORIGINS only, and in WS_ALLOWED_ORIGINS only: the rule takes both as one list. */
const CORS_LISTED = 'https://console.example.com';
const WS_LISTED = 'https://tools.example.com';

let gw: WsGateway;
let own: string;
beforeAll(async () => {
  gw = await startWsGateway({ http: { cors: { origins: [CORS_LISTED] } }, ws: { allowedOrigins: [WS_LISTED] } });
  own = new URL(gw.gateway.url).origin;
}, 60_000);
afterAll(stopAll);

/** Whether the stream's first result, SUBSCRIBED, arrived. */
const subscribed = (s: RawStream, kind: 'sse' | 'multipart'): boolean =>
  kind === 'sse'
    ? sseEvents(s.text()).some((e) => e.event === 'next' && typeOf(JSON.parse(e.data!)) === 'SUBSCRIBED')
    : multipartParts(s.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED');

const refusals = async (): Promise<number> =>
  Number(/^gateway_ws_refusals_total\{code="ORIGIN_NOT_ALLOWED"\} (\d+)/m.exec(await gw.scrape())?.[1] ?? 0);

describe.each([
  ['SSE', 'GET', SSE_ACCEPT, 'sse'],
  ['SSE', 'POST', SSE_ACCEPT, 'sse'],
  ['multipart', 'GET', MULTIPART_ACCEPT, 'multipart'],
  ['multipart', 'POST', MULTIPART_ACCEPT, 'multipart'],
] as const)('%s subscription stream over %s', (_, method, accept, kind) => {
  it("should refuse a foreign Origin with 403 ORIGIN_NOT_ALLOWED before any stream, counted with the sockets' refusals", async () => {
    const before = await refusals();
    const s = await openStream(gw.gateway.url, SUB, { method, accept, headers: { origin: FOREIGN } });
    try {
      expect(s.status).toBe(403);
      await s.ended;
      expect(JSON.parse(s.text()).errors[0].extensions.code).toBe('ORIGIN_NOT_ALLOWED');
      expect(await refusals()).toBe(before + 1);
      expect(await gw.open()).toBe(0);
    } finally {
      // A stream served all the same is not left open for the next case.
      s.abort();
      await gw.waitOpen(0, 'no stream left open');
    }
  });

  it.each([
    ['listed in CORS_ORIGINS', CORS_LISTED, CORS_LISTED],
    ['listed in WS_ALLOWED_ORIGINS', WS_LISTED, WS_LISTED],
    ["the gateway's own", 'own', undefined],
    ['none (no Origin header)', undefined, undefined],
  ])('should stream for an Origin %s', async (_what, origin, corsHeader) => {
    const headers: Record<string, string> = origin === undefined ? {} : { origin: origin === 'own' ? own : origin };
    const s = await openStream(gw.gateway.url, SUB, { method, accept, headers });
    try {
      expect(s.status).toBe(200);
      expect(s.headers.get('access-control-allow-origin') ?? undefined).toBe(corsHeader);
      await until(
        () => subscribed(s, kind),
        () => `SUBSCRIBED; got ${s.text().slice(0, 300)}`,
      );
    } finally {
      s.abort();
    }
    await gw.waitOpen(0, 'the aborted stream to give its place back');
  });
});

describe('graphql-ws upgrade', () => {
  it('should refuse a foreign Origin with 403 ORIGIN_NOT_ALLOWED, and upgrade for either list, its own origin and none', async () => {
    const refused = await upgradeStatus(gw.wsUrl, { origin: FOREIGN });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).errors[0]).toEqual({
      message: expect.stringContaining('CORS_ORIGINS or WS_ALLOWED_ORIGINS'),
      extensions: { code: 'ORIGIN_NOT_ALLOWED' },
    });
    for (const origin of [CORS_LISTED, WS_LISTED, own, undefined])
      expect([origin, (await upgradeStatus(gw.wsUrl, { origin })).status]).toEqual([origin, 101]);
  });
});

describe('CORS and queries over HTTP', () => {
  const query = (origin: string) =>
    fetch(gw.gateway.url, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });

  it('should grant CORS headers to an origin of either list, answering its preflight', async () => {
    for (const origin of [CORS_LISTED, WS_LISTED]) {
      const r = await query(origin);
      expect([origin, r.status, r.headers.get('access-control-allow-origin')]).toEqual([origin, 200, origin]);
      const p = await fetch(gw.gateway.url, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect([origin, p.status, p.headers.get('access-control-allow-origin')]).toEqual([origin, 204, origin]);
    }
  });

  it("should answer a foreign origin's query without CORS headers (the browser hides it), as documented", async () => {
    const r = await query(FOREIGN);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(await r.json()).toEqual({ data: { __typename: 'Query' } });
  });
});
