/** The upgrade's checks (path, Origin, connections per address and in all) and maxPayload, against a real gateway. */
import { ackedClient, rawClient, startWsGateway, stopAll, upgradeStatus, waitFor } from './helpers';

afterEach(stopAll);

describe('WebSocket upgrade checks', () => {
  it('should refuse a browser origin that is not allowed with 403 before upgrading', async () => {
    const gw = await startWsGateway({ ws: { allowedOrigins: ['https://console.example.com'] } });
    const refused = await upgradeStatus(gw.wsUrl, { origin: 'https://evil.example.net' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).errors[0].extensions.code).toBe('ORIGIN_NOT_ALLOWED');
    expect((await upgradeStatus(gw.wsUrl, { origin: 'null' })).status).toBe(403);
    expect(await gw.metrics()).toMatch(/gateway_ws_refusals_total\{code="ORIGIN_NOT_ALLOWED"\} 2/);
  });

  it("should accept no Origin, the gateway's own origin and a listed one", async () => {
    const gw = await startWsGateway({ ws: { allowedOrigins: ['https://console.example.com'] } });
    const own = new URL(gw.gateway.url).origin;
    expect((await upgradeStatus(gw.wsUrl)).status).toBe(101);
    expect((await upgradeStatus(gw.wsUrl, { origin: own })).status).toBe(101);
    expect((await upgradeStatus(gw.wsUrl, { origin: 'https://console.example.com' })).status).toBe(101);
  });

  it('should answer 404 for an upgrade on another path', async () => {
    const gw = await startWsGateway();
    const r = await upgradeStatus(gw.wsUrl.replace('/graphql', '/metrics'));
    expect(r.status).toBe(404);
  });

  it('should refuse sockets past the per-address bound with 429 and take new ones once one closes', async () => {
    const gw = await startWsGateway({ ws: { maxConnectionsPerAddress: 2 } });
    const a = await rawClient(gw.wsUrl);
    await rawClient(gw.wsUrl);
    const r = await upgradeStatus(gw.wsUrl);
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body).errors[0].extensions.code).toBe('TOO_MANY_CONNECTIONS');
    a.ws.close();
    await a.closed;
    await waitFor(async () => (await upgradeStatus(gw.wsUrl)).status === 101, 'a free place');
  });

  it('should refuse sockets past the total bound with 503', async () => {
    const gw = await startWsGateway({ ws: { maxConnections: 1 } });
    await rawClient(gw.wsUrl);
    expect((await upgradeStatus(gw.wsUrl)).status).toBe(503);
  });

  it('should close a socket whose message is over maxPayload with 1009', async () => {
    const gw = await startWsGateway({ ws: { maxPayloadBytes: 2048 } });
    const c = await ackedClient(gw.wsUrl);
    c.send({
      id: '1',
      type: 'subscribe',
      payload: { query: `subscription { volumeChanged(filter: { namespace: "${'x'.repeat(4000)}" }) { type } }` },
    });
    expect((await c.closed).code).toBe(1009);
    // Never parsed: the hub neither opened nor executed it (a SUBSCRIBED would count one).
    const m = await gw.scrape();
    expect(m).not.toMatch(/^gateway_live_executions_total\{/m);
    expect(await gw.open()).toBe(0);
  });

  it('should keep serving HTTP on the same port, and keep refusing a subscription over HTTP', async () => {
    const gw = await startWsGateway();
    await rawClient(gw.wsUrl);
    const q = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await q.json()).toEqual({ data: { __typename: 'Query' } });
    const s = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { operationUpdated(id: "x") { state } }' }),
    });
    expect(s.status).toBe(400);
    expect((await s.json()).errors[0].extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP');
  });
});
