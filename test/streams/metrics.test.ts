/**
 * The HTTP streams' metrics, scraped over HTTP from the gateway's /metrics: open subscriptions
 * per transport (`gateway_stream_subscriptions`), refused starts counted with graphql-ws's
 * (`gateway_ws_refusals_total`, by code), and slow consumers: bytes queued per transport
 * (`gateway_ws_queue_bytes`) and cuts by transport and reason (`gateway_slow_consumer_cuts_total`).
 */
import type { Socket } from 'node:net';
import { claim, release, startWsGateway, stopAll } from '../ws/helpers';
import { until } from '../support/until';
import { MULTIPART_ACCEPT, multipartParts, nextData, openStream, pausedStream, sseEvents, typeOf } from './helpers';

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
    expect([
      sample(before, 'gateway_stream_subscriptions{transport="sse"}'),
      sample(before, 'gateway_stream_subscriptions{transport="multipart"}'),
    ]).toEqual([0, 0]);

    const sse = await openStream(gw.gateway.url, CLAIMS);
    expect(typeOf(JSON.parse(await nextData(sse)))).toBe('SUBSCRIBED');
    const open = await gw.metrics();
    expect([
      sample(open, 'gateway_stream_subscriptions{transport="sse"}'),
      sample(open, 'gateway_stream_subscriptions{transport="multipart"}'),
    ]).toEqual([1, 0]);
    expect(sample(open, 'gateway_ws_refusals_total{code="SUBSCRIPTION_LIMIT"}')).toBeUndefined();

    // Past the address's budget: refused inside the stream, and counted.
    const refused = await openStream(gw.gateway.url, CLAIMS);
    await refused.ended;
    expect(JSON.parse(sseEvents(refused.text()).find((e) => e.event === 'next')!.data!).errors[0].extensions.code).toBe(
      'SUBSCRIPTION_LIMIT',
    );
    const after = await gw.metrics();
    expect(sample(after, 'gateway_ws_refusals_total{code="SUBSCRIPTION_LIMIT"}')).toBe(1);
    expect(sample(after, 'gateway_stream_subscriptions{transport="sse"}')).toBe(1);

    // The client goes away: the gauge follows; a multipart one counts under its own transport.
    sse.abort();
    await gw.waitOpen(0, "the gone client's place to go back");
    await until(
      async () => sample(await gw.metrics(), 'gateway_stream_subscriptions{transport="sse"}') === 0,
      'the SSE gauge back to 0',
    );
    const multipart = await openStream(gw.gateway.url, CLAIMS, { accept: MULTIPART_ACCEPT });
    await until(
      () => multipartParts(multipart.text()).some((p) => typeOf(p.payload) === 'SUBSCRIBED'),
      'SUBSCRIBED over multipart',
    );
    const last = await gw.metrics();
    expect([
      sample(last, 'gateway_stream_subscriptions{transport="sse"}'),
      sample(last, 'gateway_stream_subscriptions{transport="multipart"}'),
    ]).toEqual([0, 1]);
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

  it('should count a multipart stream cut past WS_MAX_BUFFERED_BYTES as queue', async () => {
    // Every event that shows volume `big` is about 128 KiB; a queue may hold 64 KiB.
    const gw = await startWsGateway({
      ws: { maxBufferedBytes: 64 * 1024 },
      seed: (sim) =>
        sim.seedVolume({
          ID: 'big',
          Name: 'big',
          Namespace: 'default',
          PluginID: 'aws-ebs0',
          ExternalID: 'ext-big',
          Context: { blob: 'x'.repeat(128 * 1024) },
          RequestedCapabilities: [{ AccessMode: 'multi-node-reader-only', AttachmentMode: 'file-system' }],
        }),
    });
    const cuts = async (transport: string, reason: string): Promise<number | undefined> =>
      sample(await gw.metrics(), `gateway_slow_consumer_cuts_total{transport="${transport}",reason="${reason}"}`);
    expect(await cuts('multipart', 'queue')).toBe(0);
    const paused: Socket = await pausedStream(
      gw.gateway.url,
      'subscription { volumeChanged(filter: { types: [CLAIMED, RELEASED] }) { type volume { details { ... on NomadVolumeDetails { context { key value } } } } } }',
      { accept: MULTIPART_ACCEPT },
    );
    try {
      // The kernel takes a few MiB of a paused loopback connection first; then the gateway queues.
      for (let i = 0; i < 200 && (await cuts('multipart', 'queue')) === 0; i++) {
        const alloc = claim(gw.sim, ['big'], `job-${i}`, true);
        await new Promise((r) => setTimeout(r, 5));
        release(gw.sim, alloc);
      }
      expect(await cuts('multipart', 'queue')).toBe(1);
      expect(await cuts('multipart', 'address')).toBe(0);
      await until(
        async () => sample(await gw.metrics(), 'gateway_stream_subscriptions{transport="multipart"}') === 0,
        'the cut stream to be gone',
      );
    } finally {
      paused.destroy();
    }
  });

  it('should count an SSE stream the hub dropped past LIVE_MAX_QUEUED as hub', async () => {
    const gw = await startWsGateway({ live: { maxQueued: 2 } });
    const s = await openStream(gw.gateway.url, 'subscription { volumeChanged { type volumeId } }');
    await nextData(s);
    // Three changes at once, while the subscriber's first access check is still on its way: past the bound.
    claim(gw.sim, ['vol-000', 'vol-001', 'vol-002']);
    expect(await s.ended).toEqual({ clean: false });
    await until(
      async () => sample(await gw.metrics(), 'gateway_slow_consumer_cuts_total{transport="sse",reason="hub"}') === 1,
      'the cut to be counted',
    );
    expect(sample(await gw.metrics(), 'gateway_live_slow_consumer_drops_total{field="volumeChanged"}')).toBe(1);
  });
});
