/**
 * graphql-ws close codes with raw frames (PROTOCOL.md): each one the way the library defines it,
 * plus the gateway's reasons for a refused `connection_init`.
 */
import { ANALYTICS_READ } from '../support/harness';
import {
  ackedClient,
  eventOf,
  MGMT,
  rawClient,
  seedVolumes,
  startWsGateway,
  stopAll,
  SUB,
  subscribed,
  type WsGateway,
} from './helpers';

afterEach(stopAll);

describe('graphql-ws protocol close codes', () => {
  let gw: WsGateway;
  beforeEach(async () => {
    gw = await startWsGateway({ ws: { connectionInitTimeoutMs: 300 } });
  });

  it('should close with 4400 on a message that is not JSON', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send('{not json');
    expect((await c.closed).code).toBe(4400);
  });

  it('should close with 4400 when a client sends a message only servers send', async () => {
    const c = await ackedClient(gw.wsUrl);
    c.send({ id: '1', type: 'next', payload: { data: {} } });
    const closed = await c.closed;
    expect(closed.code).toBe(4400);
    expect(closed.reason).toMatch(/servers only/);
  });

  it('should close with 4400 when connection_init has a payload that is not an object', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: ['X-Nomad-Token', MGMT] });
    expect((await c.closed).code).toBe(4400);
  });

  it('should close with 4401 on subscribe before connection_ack', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ id: '1', type: 'subscribe', payload: { query: SUB } });
    expect((await c.closed).code).toBe(4401);
  });

  it('should close with 4403 and say why when a credential in connection_init is not a string', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: { 'x-nomad-token': 42 } });
    const closed = await c.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/x-nomad-token must be a string/);
  });

  it('should close with 4403 when a credential is not printable Latin-1, naming the key and never the value', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: { 'X-Nomad-Token-east': 'sekr\u0007et' } });
    const closed = await c.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/x-nomad-token-east/);
    expect(closed.reason).not.toContain('sekr');
  });

  it('should close with 4403 when the connection_init payload is over its limit', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT, padding: 'x'.repeat(20_000) } });
    const closed = await c.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/WS_MAX_INIT_PAYLOAD_BYTES/);
  });

  it('should close with 4403 when the same credential is given twice in different case', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT, 'x-nomad-token': MGMT } });
    expect((await c.closed).code).toBe(4403);
  });

  it('should acknowledge credentials under the header names in any case, and ignore other keys', async () => {
    const c = await rawClient(gw.wsUrl);
    c.send({
      type: 'connection_init',
      payload: { 'X-NOMAD-TOKEN-EAST': ANALYTICS_READ, 'content-type': 'application/json' },
    });
    expect(await c.next()).toEqual({ type: 'connection_ack' });
    await subscribed(c, 's', 'subscription { volumeChanged(filter: { types: [CREATED] }) { type volume { name } } }');
    // The subscriber's own token decides what it sees: not a default-namespace volume (the
    // anonymous policy would see neither), then the analytics one. Events arrive in log order.
    seedVolumes(gw.sim, 1, 'default', 'dflt');
    seedVolumes(gw.sim, 1, 'analytics', 'anl');
    expect((await eventOf(c, 's', 'CREATED')).volume.name).toBe('anl 0');
  });

  it('should close with 4408 when connection_init does not come in time', async () => {
    const c = await rawClient(gw.wsUrl);
    expect((await c.closed).code).toBe(4408);
  });

  it('should close with 4409 on a second subscribe with an id still open', async () => {
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 'dup');
    expect(await gw.open()).toBe(1);
    c.send({ id: 'dup', type: 'subscribe', payload: { query: SUB } });
    expect((await c.closed).code).toBe(4409);
    // The first one's stream was closed with the socket.
    await gw.waitOpen(0, 'the stream to be closed');
  });

  it('should close with 4429 on a second connection_init', async () => {
    const c = await ackedClient(gw.wsUrl);
    c.send({ type: 'connection_init', payload: {} });
    expect((await c.closed).code).toBe(4429);
  });

  it('should close with 4406 when the client does not speak graphql-transport-ws', async () => {
    const c = await rawClient(gw.wsUrl, { protocol: null });
    expect((await c.closed).code).toBe(4406);
  });

  it('should answer ping with pong', async () => {
    const c = await ackedClient(gw.wsUrl);
    c.send({ type: 'ping', payload: { t: 1 } });
    expect(await c.next()).toEqual({ type: 'pong', payload: { t: 1 } });
  });
});
