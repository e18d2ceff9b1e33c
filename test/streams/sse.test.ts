/**
 * GraphQL over SSE (distinct connections mode) against a gateway whose own live hub watches a
 * Nomad simulator: the same events as graphql-ws for the same change, graphql-sse's own client,
 * the subscription quotas shared with graphql-ws, no in-flight slot held, no request timeout, a
 * client that goes away giving its place back, and `retry:` on shutdown.
 */
import { createClient } from 'graphql-sse';
import { ackedClient, claim, MGMT, seedVolumes, startWsGateway, stopAll, subscribed } from '../ws/helpers';
import { until } from '../support/until';
import { MULTIPART_ACCEPT, multipartParts, nextData, openStream, sseEvents, typeOf } from './helpers';

afterEach(stopAll);

const CLAIMS = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volumeId } }';
const isClaim = (r: any): boolean => typeOf(r) === 'CLAIMED';

describe('subscriptions over SSE', () => {
  it('should send the same event bytes over SSE as over graphql-ws for the same change', async () => {
    const gw = await startWsGateway();
    const ws = await ackedClient(gw.wsUrl);
    await subscribed(ws, 'w', CLAIMS);
    const sse = await openStream(gw.gateway.url, CLAIMS);
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(JSON.parse(await nextData(sse))).toMatchObject({ data: { volumeChanged: { type: 'SUBSCRIBED' } } });
    await gw.waitOpen(2, 'both subscriptions');
    claim(gw.sim, ['vol-001']);
    const [overWs, overSse] = await Promise.all([
      ws.nextRaw(15_000, (f) => f.includes('"CLAIMED"')),
      nextData(sse, isClaim),
    ]);
    const prefix = '{"id":"w","type":"next","payload":';
    // The hub's one serialization, byte for byte, in both transports.
    expect(overWs.slice(prefix.length, -1)).toBe(overSse);
    expect(JSON.parse(overSse)).toEqual({ data: { volumeChanged: { type: 'CLAIMED', volumeId: expect.any(String) } } });
  });

  it('should send a large result (shared bytes) intact over SSE and multipart, the same as over graphql-ws', async () => {
    const gw = await startWsGateway({ seed: (sim) => seedVolumes(sim, 1, 'default', 'größe-✓') });
    // Past 1 KiB a result is written as the hub's shared UTF-8 bytes between the framing.
    const big = `subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { name } ${Array.from({ length: 80 }, (_, i) => `t${i}: __typename`).join(' ')} } }`;
    const ws = await ackedClient(gw.wsUrl);
    await subscribed(ws, 'w', big);
    const sse = await openStream(gw.gateway.url, big);
    const multipart = await openStream(gw.gateway.url, big, { accept: MULTIPART_ACCEPT });
    await nextData(sse);
    await gw.waitOpen(3, 'the three subscriptions');
    claim(gw.sim, ['größe-✓-000']);
    const [overWs, overSse] = await Promise.all([
      ws.nextRaw(15_000, (f) => f.includes('"CLAIMED"')),
      nextData(sse, isClaim),
    ]);
    await until(() => multipartParts(multipart.text()).some((p) => isClaim(p.payload)), 'the claim over multipart');
    const prefix = '{"id":"w","type":"next","payload":';
    expect(overSse.length).toBeGreaterThan(2048);
    expect(overWs.slice(prefix.length, -1)).toBe(overSse);
    expect(JSON.parse(overSse).data.volumeChanged).toMatchObject({
      type: 'CLAIMED',
      volume: { name: 'größe-✓ 0' },
      t79: 'VolumeChangeEvent',
    });
    expect(multipartParts(multipart.text()).find((p) => isClaim(p.payload)).payload).toEqual(JSON.parse(overSse));
    // The stream goes on after a shared result: the next event is framed too.
    claim(gw.sim, ['vol-001']);
    await nextData(sse, (d) => isClaim(d) && d.data.volumeChanged.volume.name === 'vol 1');
    sse.abort();
    multipart.abort();
  });

  it("should serve graphql-sse's client in distinct connections mode, and give the place back when it unsubscribes", async () => {
    const gw = await startWsGateway();
    const client = createClient({ url: gw.gateway.url, headers: { 'X-Nomad-Token': MGMT }, retryAttempts: 0 });
    const seen: any[] = [];
    let failed: unknown;
    const unsubscribe = client.subscribe(
      { query: CLAIMS },
      { next: (r) => void seen.push(r), error: (e) => (failed = e), complete: () => undefined },
    );
    try {
      await until(
        () => seen.some((r) => typeOf(r) === 'SUBSCRIBED') || failed !== undefined,
        'SUBSCRIBED through graphql-sse',
      );
      expect(failed).toBeUndefined();
      claim(gw.sim, ['vol-002']);
      await until(() => seen.some(isClaim), 'the claim through graphql-sse');
      expect(seen.find(isClaim)).toEqual({
        data: { volumeChanged: { type: 'CLAIMED', volumeId: expect.any(String) } },
      });
      expect(await gw.open()).toBe(1);
    } finally {
      unsubscribe();
      client.dispose();
    }
    await gw.waitOpen(0, 'the unsubscribed stream to give its place back');
  });

  it('should serve a GET (EventSource) subscription too', async () => {
    const gw = await startWsGateway();
    const sse = await openStream(gw.gateway.url, CLAIMS, { method: 'GET' });
    expect(sse.status).toBe(200);
    expect(typeOf(JSON.parse(await nextData(sse)))).toBe('SUBSCRIBED');
    sse.abort();
    await gw.waitOpen(0, 'the aborted stream to give its place back');
  });

  it("should count SSE subscriptions against LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS with graphql-ws ones, refuse past it, and take a gone client's place back", async () => {
    const gw = await startWsGateway({ live: { maxSubscriptionsPerAddress: 2 } });
    const ws = await ackedClient(gw.wsUrl);
    await subscribed(ws, 'w');
    const first = await openStream(gw.gateway.url, CLAIMS);
    await nextData(first);
    const refused = await openStream(gw.gateway.url, CLAIMS);
    expect(refused.status).toBe(200);
    expect(await refused.ended).toEqual({ clean: true });
    const events = sseEvents(refused.text()).filter((e) => !e.comment);
    expect(events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(JSON.parse(events[0]!.data!).errors[0].extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT' });
    // The client goes away: its place goes back, and the next one is served.
    first.abort();
    await gw.waitOpen(1, "the gone client's place to go back");
    const again = await openStream(gw.gateway.url, CLAIMS);
    expect(typeOf(JSON.parse(await nextData(again)))).toBe('SUBSCRIBED');
  });

  it("should refuse a subscription that fails validation inside the stream, with graphql-ws's code", async () => {
    const gw = await startWsGateway();
    const s = await openStream(gw.gateway.url, 'subscription { volumeChanged { nope } }');
    await s.ended;
    const [next, complete] = sseEvents(s.text()).filter((e) => !e.comment);
    expect(JSON.parse(next!.data!).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(complete!.event).toBe('complete');
    expect(await gw.open()).toBe(0);
  });

  it('should hold no HTTP in-flight slot: streams past the caller cap, and queries still answered', async () => {
    const gw = await startWsGateway({
      http: { rateLimit: { caller: { maxInFlight: 1 }, address: { maxInFlight: 1 } } },
    });
    const a = await openStream(gw.gateway.url, CLAIMS);
    const b = await openStream(gw.gateway.url, CLAIMS);
    expect([a.status, b.status]).toEqual([200, 200]);
    await Promise.all([nextData(a), nextData(b)]);
    const q = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Nomad-Token': MGMT },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(q.status).toBe(200);
  });

  it('should keep a stream open past REQUEST_TIMEOUT_MS and deliver events after it', async () => {
    const gw = await startWsGateway({ http: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
    const s = await openStream(gw.gateway.url, CLAIMS);
    await nextData(s);
    await new Promise((r) => setTimeout(r, 1_500));
    claim(gw.sim, ['vol-003']);
    expect(typeOf(JSON.parse(await nextData(s, isClaim)))).toBe('CLAIMED');
    expect(await gw.open()).toBe(1);
  });

  it('should send `retry:` and end the stream without `complete` when the gateway stops', async () => {
    const gw = await startWsGateway();
    const s = await openStream(gw.gateway.url, CLAIMS);
    await nextData(s);
    await gw.gateway.stop();
    await s.ended;
    const events = sseEvents(s.text()).filter((e) => !e.comment);
    const last = events.at(-1)!;
    expect(Number(last.retry)).toBeGreaterThanOrEqual(1_000);
    expect(events.some((e) => e.event === 'complete')).toBe(false);
    expect(await gw.open()).toBe(0);
  });

  it("should make graphql-sse's client reconnect (not fail) when the gateway stops", async () => {
    const gw = await startWsGateway();
    const connecting: boolean[] = [];
    let failed: unknown;
    let seen = 0;
    const client = createClient({
      url: gw.gateway.url,
      headers: { 'X-Nomad-Token': MGMT },
      retryAttempts: 1,
      retry: async () => undefined,
      on: { connecting: (again) => void connecting.push(again) },
    });
    client.subscribe(
      { query: CLAIMS },
      { next: () => void seen++, error: (e) => (failed = e), complete: () => undefined },
    );
    try {
      await until(() => seen > 0, 'SUBSCRIBED through graphql-sse');
      await gw.gateway.stop();
      // The end without `complete` is a network error to graphql-sse: it connects again (to a stopped gateway here, so it then fails).
      await until(() => failed !== undefined, 'the retry to give up');
      expect(connecting).toEqual([false, true]);
    } finally {
      client.dispose();
    }
  });

  it("should answer a query sent by graphql-sse's client as one event, with the request's credentials", async () => {
    const gw = await startWsGateway();
    const client = createClient({ url: gw.gateway.url, headers: { 'X-Nomad-Token': MGMT }, retryAttempts: 0 });
    try {
      const results: any[] = [];
      for await (const r of client.iterate({ query: '{ volumes(first: 2) { nodes { id nativeId } } }' }))
        results.push(r);
      expect(results).toEqual([
        {
          data: {
            volumes: {
              nodes: [
                { id: expect.any(String), nativeId: 'vol-000' },
                { id: expect.any(String), nativeId: 'vol-001' },
              ],
            },
          },
        },
      ]);
    } finally {
      client.dispose();
    }
    // A client that accepts JSON too gets JSON.
    const r = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream, application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('should still refuse a subscription asked for as plain JSON', async () => {
    const gw = await startWsGateway();
    const r = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'X-Nomad-Token': MGMT },
      body: JSON.stringify({ query: CLAIMS }),
    });
    expect(r.status).toBe(400);
    expect((await r.json()).errors[0].extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP');
  });
});
