/**
 * Apollo's multipart HTTP subscriptions against a gateway whose own live hub watches a Nomad
 * simulator: Apollo Client's HttpLink receiving an event, the framing (`payload`, `{}` heartbeats
 * every 5 s, the closing boundary), the stream outliving REQUEST_TIMEOUT_MS, and the shutdown.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { claim, MGMT, startWsGateway, stopAll } from '../ws/helpers';
import { until } from '../support/until';
import { MULTIPART_ACCEPT, multipartParts, openStream, typeOf } from './helpers';

afterEach(stopAll);

const CLAIMS = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volumeId } }';

describe('subscriptions over multipart HTTP', () => {
  it("should deliver an event to Apollo Client's HttpLink, and give the place back when it unsubscribes", async () => {
    const gw = await startWsGateway();
    const client = new ApolloClient({
      link: new HttpLink({ uri: gw.gateway.url, headers: { 'X-Nomad-Token': MGMT } }),
      cache: new InMemoryCache(),
    });
    const seen: any[] = [];
    let failed: unknown;
    const sub = client
      .subscribe({ query: gql(CLAIMS) })
      .subscribe({ next: (r) => void seen.push(r), error: (e: unknown) => (failed = e) });
    try {
      await until(
        () => seen.some((r) => typeOf(r) === 'SUBSCRIBED') || failed !== undefined,
        'SUBSCRIBED through HttpLink',
      );
      expect(failed).toBeUndefined();
      claim(gw.sim, ['vol-001']);
      await until(() => seen.some((r) => typeOf(r) === 'CLAIMED'), 'the claim through HttpLink');
      expect(seen.find((r) => typeOf(r) === 'CLAIMED').data.volumeChanged).toMatchObject({
        type: 'CLAIMED',
        volumeId: expect.any(String),
      });
    } finally {
      sub.unsubscribe();
      client.stop();
    }
    await gw.waitOpen(0, 'the unsubscribed stream to give its place back');
  });

  it('should frame results as `payload` parts with `{}` heartbeats every 5 s, past REQUEST_TIMEOUT_MS', async () => {
    const gw = await startWsGateway({ http: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
    const s = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    await until(() => multipartParts(s.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED'), 'SUBSCRIBED');
    const heartbeats = (): number => multipartParts(s.text()).filter((p) => Object.keys(p).length === 0).length;
    // The opening heartbeat, then one 5 s later.
    expect(heartbeats()).toBe(1);
    await until(() => heartbeats() >= 2, 'a heartbeat after 5 s', 10_000);
    claim(gw.sim, ['vol-002']);
    await until(() => multipartParts(s.text()).some((p) => typeOf(p.payload) === 'CLAIMED'), 'the claim');
    expect(multipartParts(s.text()).find((p) => typeOf(p.payload) === 'CLAIMED')).toEqual({
      payload: { data: { volumeChanged: { type: 'CLAIMED', volumeId: expect.any(String) } } },
    });
  });

  it('should end the stream with a SHUTTING_DOWN error and the closing boundary when the gateway stops', async () => {
    const gw = await startWsGateway();
    const s = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    await until(() => multipartParts(s.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED'), 'SUBSCRIBED');
    await gw.gateway.stop();
    expect(await s.ended).toEqual({ clean: true });
    expect(s.text().endsWith('\r\n--graphql--\r\n')).toBe(true);
    expect(multipartParts(s.text()).at(-1)).toEqual({
      payload: null,
      errors: [{ message: expect.any(String), extensions: { code: 'SHUTTING_DOWN' } }],
    });
    expect(await gw.open()).toBe(0);
  });

  it("should tell Apollo Client's HttpLink SHUTTING_DOWN (a protocol error, not a quiet end) when the gateway stops", async () => {
    const gw = await startWsGateway();
    const client = new ApolloClient({
      link: new HttpLink({ uri: gw.gateway.url, headers: { 'X-Nomad-Token': MGMT } }),
      cache: new InMemoryCache(),
    });
    const seen: any[] = [];
    let completed = false;
    const sub = client
      .subscribe({ query: gql(CLAIMS) })
      .subscribe({ next: (r) => void seen.push(r), complete: () => (completed = true) });
    try {
      await until(() => seen.length > 0, 'SUBSCRIBED through HttpLink');
      await gw.gateway.stop();
      await until(() => completed, 'the end of the subscription');
      // Apollo Client 4 hands the transport's error on as the result's `error` (CombinedProtocolErrors), then completes.
      const last = seen.at(-1);
      expect(last.error?.name).toBe('CombinedProtocolErrors');
      expect(last.error.errors).toEqual([
        { message: expect.stringContaining('shutting down'), extensions: { code: 'SHUTTING_DOWN' } },
      ]);
    } finally {
      sub.unsubscribe();
      client.stop();
    }
  });

  it('should answer a refused start (over the address quota) as a payload with errors, then end', async () => {
    const gw = await startWsGateway({ live: { maxSubscriptionsPerAddress: 1 } });
    const first = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    await until(() => multipartParts(first.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED'), 'SUBSCRIBED');
    const refused = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    await refused.ended;
    expect(refused.text().endsWith('\r\n--graphql--\r\n')).toBe(true);
    const parts = multipartParts(refused.text()).filter((p) => Object.keys(p).length > 0);
    expect(parts).toHaveLength(1);
    expect(parts[0].payload.errors[0].extensions.code).toBe('SUBSCRIPTION_LIMIT');
  });
});
