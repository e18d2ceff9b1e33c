/**
 * Streams through the socket, fed by the gateway's own live hub from the Nomad simulator's real
 * changes: shared bytes written as the hub serialized them, errors formatted as HTTP formats
 * them, iterators closed on complete, on a credential that stops working and on an abrupt TCP
 * close, and slow consumers closed (4413) without stalling another socket.
 */
import type { Socket } from 'node:net';
import {
  ackedClient,
  claim,
  eventOf,
  MGMT,
  release,
  sample,
  startWsGateway,
  stopAll,
  SUB,
  subscribed,
  waitFor,
  type RawClient,
} from './helpers';

afterEach(stopAll);

const gid = (id: string): string =>
  Buffer.from(JSON.stringify(['Volume', 'east', 'default', id])).toString('base64url');
const tcp = (c: RawClient): Socket => (c.ws as unknown as { _socket: Socket })._socket;

describe('live streams over graphql-ws', () => {
  it("should execute an event once for two subscribers and write the hub's bytes unchanged to both", async () => {
    const gw = await startWsGateway();
    const a = await ackedClient(gw.wsUrl);
    const b = await ackedClient(gw.wsUrl);
    const claims = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volumeId } }';
    await subscribed(a, 'a1', claims);
    await subscribed(b, 'b"1', claims);
    const executions = async (): Promise<number> =>
      sample(await gw.scrape(), 'gateway_live_executions_total{field="volumeChanged"}') ?? 0;
    // One execution per SUBSCRIBED; one request read once for both.
    expect(await executions()).toBe(2);
    expect(sample(await gw.scrape(), 'gateway_live_subscription_groups')).toBe(1);
    claim(gw.sim, ['vol-001']);
    const isClaim = (f: string): boolean => f.includes('"CLAIMED"');
    const [ra, rb] = await Promise.all([a.nextRaw(15_000, isClaim), b.nextRaw(15_000, isClaim)]);
    const prefixA = '{"id":"a1","type":"next","payload":';
    const prefixB = '{"id":"b\\"1","type":"next","payload":';
    expect(ra.startsWith(prefixA) && ra.endsWith('}')).toBe(true);
    expect(rb.startsWith(prefixB) && rb.endsWith('}')).toBe(true);
    // The same payload bytes in both frames, only the ids differ.
    const pa = ra.slice(prefixA.length, -1);
    expect(rb.slice(prefixB.length, -1)).toBe(pa);
    expect(JSON.parse(pa)).toEqual({ data: { volumeChanged: { type: 'CLAIMED', volumeId: expect.any(String) } } });
    // The claim executed once for both (the same document, variables and access).
    await waitFor(async () => (await executions()) >= 3, 'the event execution to be counted');
    expect(await executions()).toBe(3);
  });

  it("should format a result's errors as HTTP does: typed code, message, path", async () => {
    // No read budget: the plugin needs a backend read the event may not make, so that field fails alone.
    const gw = await startWsGateway({ live: { eventReadsPerCredential: 0 } });
    const c = await ackedClient(gw.wsUrl);
    const doc =
      'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { name details { ... on NomadVolumeDetails { pluginId plugin { id } } } } } }';
    await subscribed(c, 's', doc);
    claim(gw.sim, ['vol-002']);
    const m = await c.nextFor('s');
    expect(m.payload.data.volumeChanged).toEqual({
      type: 'CLAIMED',
      volume: { name: 'vol 2', details: { pluginId: 'aws-ebs0', plugin: null } },
    });
    expect(m.payload.errors).toHaveLength(1);
    expect(m.payload.errors[0]).toMatchObject({
      path: ['volumeChanged', 'volume', 'details', 'plugin'],
      extensions: { code: 'NOT_SERVED_IN_EVENTS', limit: 'eventReadsPerCredential', max: 0 },
    });
    expect(m.payload.errors[0].message).toEqual(expect.any(String));
    expect(JSON.stringify(m.payload)).not.toMatch(/stack|hunter2/);
  });

  it('should answer a subscription the hub cannot start (CURSOR_EXPIRED) with its errors, then complete', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    const foreign = Buffer.from(JSON.stringify(['otherepoch', 1])).toString('base64url');
    c.send({
      id: 's',
      type: 'subscribe',
      payload: { query: 'subscription($s: String) { volumeChanged(since: $s) { type } }', variables: { s: foreign } },
    });
    expect(await c.next()).toMatchObject({
      id: 's',
      type: 'next',
      payload: { errors: [{ extensions: { code: 'CURSOR_EXPIRED' } }] },
    });
    expect(await c.next()).toEqual({ id: 's', type: 'complete' });
    expect(await gw.open()).toBe(0);
    // Its place is free again.
    await subscribed(c, 's');
    await gw.waitOpen(1, 'the same id again');
  });

  it("should close the hub's stream when the client completes", async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 's');
    expect(await gw.subscriptions()).toMatchObject({ volumeChanged: 1 });
    c.send({ id: 's', type: 'complete' });
    await gw.waitOpen(0, 'the stream to be returned');
  });

  it("should end the stream with UNAUTHENTICATED once the caller's token is revoked, and keep the socket", async () => {
    const gw = await startWsGateway({ live: { accessTtlMs: 0 } });
    gw.sim.addToken({ secret: 'soon-revoked', namespaces: { default: 'read' } });
    const c = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': 'soon-revoked' });
    await subscribed(
      c,
      's',
      'subscription { volumeChanged(filter: { types: [CLAIMED, RELEASED] }) { type volumeId } }',
    );
    const alloc = claim(gw.sim, ['vol-000']);
    await eventOf(c, 's', 'CLAIMED');
    gw.sim.removeToken('soon-revoked');
    release(gw.sim, alloc);
    // The next event's access check finds the token unknown: the stream's last result says so.
    const m = await c.nextFor('s');
    expect(m).toMatchObject({
      id: 's',
      type: 'next',
      payload: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] },
    });
    expect(m.payload.data).toBeUndefined();
    expect(await c.nextFor('s')).toEqual({ id: 's', type: 'complete' });
    await gw.waitOpen(0, 'the stream to be closed');
    c.send({ type: 'ping' });
    expect(await c.next()).toEqual({ type: 'pong' });
  });

  it('should close every stream of a socket whose TCP connection drops', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 'a');
    await subscribed(
      c,
      'b',
      'subscription { attachmentChanged(target: { node: "node-1111" }) { type } }',
      undefined,
      'attachmentChanged',
    );
    expect(await gw.subscriptions()).toMatchObject({ volumeChanged: 1, attachmentChanged: 1 });
    tcp(c).destroy();
    await gw.waitOpen(0, 'both streams to be returned');
    await waitFor(async () => /^gateway_ws_connections 0$/m.test(await gw.metrics()), 'the socket to be gone');
  });

  it('should close a slow consumer with 4413 while another socket keeps receiving every event', async () => {
    // A volume whose plugin context is large: every event that shows it is about 128 KiB. Readers
    // claim it, so a claim never waits for the previous one's release to finish.
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
    const doc =
      'subscription { volumeChanged(filter: { types: [CLAIMED, RELEASED] }) { type volume { details { ... on NomadVolumeDetails { context { key value } } } } } }';
    const slow = await ackedClient(gw.wsUrl);
    const fast = await ackedClient(gw.wsUrl);
    await subscribed(slow, 's', doc);
    await subscribed(fast, 'f', doc);
    // Stop reading: the kernel buffers fill, then the gateway's queue for this socket grows.
    tcp(slow).pause();
    const gaveUp = async (): Promise<boolean> =>
      (sample(await gw.scrape(), 'gateway_ws_messages_dropped_total') ?? 0) > 0;
    const seen: string[] = [];
    // Claim and release in turn until the gateway gives up on the slow socket; the fast reader
    // gets each event before the next change is made.
    for (let i = 0; i < 200 && !(await gaveUp()); i++) {
      const alloc = claim(gw.sim, ['big'], `job-${i}`, true);
      seen.push((await eventOf(fast, 'f', 'CLAIMED')).type);
      release(gw.sim, alloc);
      seen.push((await eventOf(fast, 'f', 'RELEASED')).type);
    }
    expect(await gaveUp()).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((t, i) => t === (i % 2 === 0 ? 'CLAIMED' : 'RELEASED'))).toBe(true);
    // The slow socket is cut (it cannot even read the close frame) and its stream closed.
    await gw.waitOpen(1, "the slow socket's stream to be closed");
    await waitFor(
      async () => sample(await gw.scrape(), 'gateway_ws_closes_total{code="4413"}') === 1,
      'the 4413 close to be counted',
    );
    expect(sample(await gw.scrape(), 'gateway_slow_consumer_cuts_total{transport="ws",reason="queue"}')).toBe(1);
    // The fast socket is unaffected.
    const after = claim(gw.sim, ['big'], 'after-big', true);
    expect((await eventOf(fast, 'f', 'CLAIMED')).volume.details.context[0].key).toBe('blob');
    release(gw.sim, after);
    tcp(slow).resume();
    // It reads what was queued, then the close frame if it made it before the cut (else 1006).
    expect([4413, 1006]).toContain((await slow.closed).code);
  });

  it('should close the socket with 4413 when the hub drops a subscriber that falls LIVE_MAX_QUEUED behind', async () => {
    const gw = await startWsGateway({ live: { maxQueued: 2 } });
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 's');
    // One allocation claims three volumes: three changes at once, while the subscriber's first
    // access check is still on its way to Nomad, so they queue past the bound.
    claim(gw.sim, ['vol-000', 'vol-001', 'vol-002']);
    expect(await c.closed).toEqual({ code: 4413, reason: 'Slow consumer: the live hub dropped this subscriber' });
    expect(sample(await gw.scrape(), 'gateway_live_slow_consumer_drops_total{field="volumeChanged"}')).toBe(1);
    expect(sample(await gw.scrape(), 'gateway_slow_consumer_cuts_total{transport="ws",reason="hub"}')).toBe(1);
    await gw.waitOpen(0, 'the dropped stream to be closed');
  });

  it("should be retried by graphql-ws's own client after a 4413 close (not one of its fatal codes)", async () => {
    const { createClient } = await import('graphql-ws');
    const WebSocket = (await import('ws')).default;
    const gw = await startWsGateway({ live: { maxQueued: 2 } });
    let connected = 0;
    const client = createClient({
      url: gw.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'X-Nomad-Token': MGMT },
      retryAttempts: 3,
      retryWait: async () => undefined,
      lazy: true,
      on: { connected: () => void connected++ },
    });
    try {
      const events: any[] = [];
      const errors: unknown[] = [];
      client.subscribe<any>(
        { query: SUB },
        {
          next: (v) => void events.push(v.data?.volumeChanged),
          error: (e) => void errors.push(e),
          complete: () => undefined,
        },
      );
      await gw.waitOpen(1, 'the first subscription');
      claim(gw.sim, ['vol-000', 'vol-001', 'vol-002']);
      // Dropped; the client reconnects and subscribes again by itself.
      await waitFor(async () => sample(await gw.scrape(), 'gateway_ws_closes_total{code="4413"}') === 1, 'the drop');
      await waitFor(async () => connected === 2 && (await gw.open()) === 1, 'the client to reconnect and resubscribe');
      await waitFor(() => events.filter((e) => e?.type === 'SUBSCRIBED').length === 2, 'the second SUBSCRIBED');
      // One change: within the bound, it arrives.
      claim(gw.sim, ['vol-003'], 'later');
      await waitFor(
        () => events.some((e) => e?.type === 'CLAIMED' && e.volumeId === gid('vol-003')),
        'the event after reconnecting',
      );
      expect(errors).toEqual([]);
    } finally {
      await client.dispose();
    }
  });
});
