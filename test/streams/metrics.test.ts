/**
 * The HTTP streams' metrics, scraped over HTTP from the gateway's /metrics: open subscriptions
 * per transport (`gateway_stream_subscriptions`), and refused starts counted with graphql-ws's
 * (`gateway_ws_refusals_total`, by code).
 */
import { startWsGateway, stopAll } from '../ws/helpers';
import { until } from '../support/until';
import { MULTIPART_ACCEPT, multipartParts, nextData, openStream, sseEvents, typeOf } from './helpers';

afterEach(stopAll);

const CLAIMS = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volumeId } }';

/** A sample's value in a scrape, or undefined when the series is absent. */
function sample(scrape: string, series: string): number | undefined {
  const line = scrape.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('HTTP stream metrics', () => {
  it('should show open SSE and multipart subscriptions by transport, and count a start refused past LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS', async () => {
    const gw = await startWsGateway({ live: { maxSubscriptionsPerAddress: 1 } });
    const before = await gw.metrics();
    expect([sample(before, 'gateway_stream_subscriptions{transport="sse"}'), sample(before, 'gateway_stream_subscriptions{transport="multipart"}')]).toEqual([0, 0]);

    const sse = await openStream(gw.gateway.url, CLAIMS);
    expect(typeOf(JSON.parse(await nextData(sse)))).toBe('SUBSCRIBED');
    const open = await gw.metrics();
    expect([sample(open, 'gateway_stream_subscriptions{transport="sse"}'), sample(open, 'gateway_stream_subscriptions{transport="multipart"}')]).toEqual([1, 0]);
    expect(sample(open, 'gateway_ws_refusals_total{code="SUBSCRIPTION_LIMIT"}')).toBeUndefined();

    // Past the address's budget: refused inside the stream, and counted.
    const refused = await openStream(gw.gateway.url, CLAIMS);
    await refused.ended;
    expect(JSON.parse(sseEvents(refused.text()).find((e) => e.event === 'next')!.data!).errors[0].extensions.code).toBe('SUBSCRIPTION_LIMIT');
    const after = await gw.metrics();
    expect(sample(after, 'gateway_ws_refusals_total{code="SUBSCRIPTION_LIMIT"}')).toBe(1);
    expect(sample(after, 'gateway_stream_subscriptions{transport="sse"}')).toBe(1);

    // The client goes away: the gauge follows; a multipart one counts under its own transport.
    sse.abort();
    await gw.waitOpen(0, 'the gone client\'s place to go back');
    await until(async () => sample(await gw.metrics(), 'gateway_stream_subscriptions{transport="sse"}') === 0, 'the SSE gauge back to 0');
    const multipart = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    await until(() => multipartParts(multipart.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED'), 'SUBSCRIBED over multipart');
    const last = await gw.metrics();
    expect([sample(last, 'gateway_stream_subscriptions{transport="sse"}'), sample(last, 'gateway_stream_subscriptions{transport="multipart"}')]).toEqual([0, 1]);
    multipart.abort();
  });

  it('should count a start refused by the operation checks, and a malformed credential header answered 400', async () => {
    const gw = await startWsGateway();
    const invalid = await openStream(gw.gateway.url, 'subscription { volumeChanged { nope } }');
    await invalid.ended;
    const bad = await openStream(gw.gateway.url, CLAIMS, { headers: { 'X-Nomad-Token': 'a\tb' } });
    expect(bad.status).toBe(400);
    const scrape = await gw.metrics();
    expect(sample(scrape, 'gateway_ws_refusals_total{code="GRAPHQL_VALIDATION_FAILED"}')).toBe(1);
    expect(sample(scrape, 'gateway_ws_refusals_total{code="BAD_USER_INPUT"}')).toBe(1);
    expect(sample(scrape, 'gateway_stream_subscriptions{transport="sse"}')).toBe(0);
  });
});
