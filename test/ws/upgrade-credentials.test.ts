/**
 * Issue 19 item 4: credentials on the WebSocket upgrade request's headers, under the same names as
 * HTTP, as routers send them (docs/subscriptions.md, "Credentials"). The upgrade's header wins per
 * name; `connection_init` may repeat it with the same value only (else 4403); both sources feed the
 * same start checks and the same per-credential budget.
 */
import { disposeAll, MGMT, OS, startGatewayFor, startOpenStack } from '../support/harness';
import { rawClient, startWsGateway, stopAll, subscribed, SUB, type RawClient } from './helpers';

const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await stopAll();
  await disposeAll();
});

/** A socket with `headers` on its upgrade, past `connection_init` with `payload` (none when undefined). */
async function open(
  url: string,
  headers: Record<string, string>,
  payload?: Record<string, unknown>,
): Promise<RawClient> {
  const c = await rawClient(url, { headers });
  clients.push(c);
  c.send(payload === undefined ? { type: 'connection_init' } : { type: 'connection_init', payload });
  return c;
}

async function acked(c: RawClient): Promise<RawClient> {
  expect(await c.next()).toEqual({ type: 'connection_ack' });
  return c;
}

describe('credentials on the WebSocket upgrade', () => {
  it('should deliver OpenStack events to a socket with X-Auth-Token on its upgrade and an empty connection_init', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor([
      os.backend('os', {
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        watchFastMs: 50,
        watchSlowMs: 100,
      }),
    ]);
    const wsUrl = gw.gateway.url.replace(/^http/, 'ws');
    const query =
      'subscription { volumeChanged(filter: { backends: ["os"] }) { type volume { name } omittedBackends { backend { id } reason code } } }';

    const c = await acked(await open(wsUrl, { 'X-Auth-Token': os.demoToken }, {}));
    const s = await subscribed(c, 's', query);
    expect(s.omittedBackends).toEqual([]);
    os.sim.seedVolume({ project: os.demo, name: 'from-the-upgrade', size: 1 });
    const created = await c.next(20_000, (m) => m.id === 's' && m.payload?.data?.volumeChanged?.type === 'CREATED');
    expect(created.payload.data.volumeChanged.volume.name).toBe('from-the-upgrade');

    // The same socket without the header has no credential for the region: the upgrade's is what counted.
    const bare = await acked(await open(wsUrl, {}, {}));
    expect((await subscribed(bare, 's', query)).omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'NO_CREDENTIAL', code: null },
    ]);
  });

  it("should accept connection_init repeating the upgrade's credential with the same value, under any case", async () => {
    const gw = await startWsGateway();
    const c = await acked(await open(gw.wsUrl, { 'X-Nomad-Token': MGMT }, { 'x-NOMAD-token': ` ${MGMT} ` }));
    await subscribed(c, 's', SUB);
  });

  it("should refuse with 4403 a connection_init whose credential differs from the upgrade's under the same name, naming the key and neither value", async () => {
    const gw = await startWsGateway();
    const c = await open(gw.wsUrl, { 'X-Nomad-Token': MGMT }, { 'X-NOMAD-TOKEN': 'another-callers-token' });
    const closed = await c.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toContain('X-NOMAD-TOKEN');
    expect(closed.reason).not.toContain(MGMT);
    expect(closed.reason).not.toContain('another-callers-token');
    expect(await gw.metrics()).toMatch(/^gateway_ws_refusals_total\{code="BAD_CONNECTION_INIT"\} 1$/m);
  });

  it('should combine names from both sources as HTTP does: a per-backend name beats the shared one wherever each came from', async () => {
    const gw = await startWsGateway();
    // The per-backend header on the upgrade is valid for east; the shared one in connection_init is garbage.
    const c = await acked(await open(gw.wsUrl, { 'X-Nomad-Token-east': MGMT }, { 'X-Nomad-Token': 'garbage' }));
    const s = await subscribed(c, 's', 'subscription { volumeChanged { type omittedBackends { backend { id } } } }');
    expect(s.omittedBackends).toEqual([]);
  });

  it('should count a credential sent on the upgrade and the same one sent in connection_init as one caller in the per-credential budget', async () => {
    const gw = await startWsGateway({ ws: { maxSubscriptionsPerCredential: 1 } });
    const a = await acked(await open(gw.wsUrl, { 'X-Nomad-Token': MGMT }));
    await subscribed(a, 's', SUB);
    const b = await acked(await open(gw.wsUrl, {}, { 'X-Nomad-Token': MGMT }));
    b.send({ id: 's', type: 'subscribe', payload: { query: SUB } });
    expect((await b.nextFor('s', 10_000)).payload.errors[0].extensions).toMatchObject({
      code: 'SUBSCRIPTION_LIMIT',
      limit: 'maxSubscriptionsPerCredential',
    });
  });
});
