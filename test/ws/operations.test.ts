/**
 * What a `subscribe` may run: subscriptions only, under the same limits as HTTP (same codes), and
 * the subscription quotas. Every refusal of the socket layer is an `error` message for that id; the
 * live hub's (its budget across sockets) is the subscription's only result, then `complete`; the
 * socket stays open.
 */
import { ackedClient, MGMT, OP_SUB, sample, startWsGateway, stopAll, SUB, subscribed, type RawClient } from './helpers';
import { createHash } from 'node:crypto';
import { TrustedDocuments } from '../../server/http/trusted-documents';
import { ANALYTICS_READ } from '../support/harness';

afterEach(stopAll);

async function subscribeError(
  c: RawClient,
  id: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<any[]> {
  c.send({ id, type: 'subscribe', payload: { query, variables } });
  const m = await c.nextFor(id);
  expect(m).toMatchObject({ id, type: 'error' });
  return m.payload;
}

/** The hub's refusal: one result with errors, then `complete`. */
async function hubRefusal(c: RawClient, id: string, query: string): Promise<any[]> {
  c.send({ id, type: 'subscribe', payload: { query } });
  const m = await c.nextFor(id);
  expect(m).toMatchObject({ id, type: 'next', payload: { errors: expect.any(Array) } });
  expect(await c.nextFor(id)).toEqual({ id, type: 'complete' });
  return m.payload.errors;
}

/** Still open: a ping is answered. */
async function expectOpen(c: RawClient): Promise<void> {
  c.send({ type: 'ping' });
  expect(await c.next(15_000, (m) => m.type === 'pong')).toEqual({ type: 'pong' });
}

describe('subscribe over graphql-ws', () => {
  it('should refuse a query and a mutation with a clear error, and keep the socket open', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    const [q] = await subscribeError(c, 'q', '{ __typename }');
    expect(q.extensions.code).toBe('OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET');
    expect(q.message).toMatch(/HTTP POST/);
    const [m] = await subscribeError(
      c,
      'm',
      'mutation { deleteVolume(input: { volumeId: "x" }) { operation { id } } }',
    );
    expect(m.extensions.code).toBe('OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET');
    await expectOpen(c);
    // Refused by the socket layer: the hub never ran them.
    const scraped = await gw.scrape();
    expect(sample(scraped, 'gateway_ws_refusals_total{code="OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET"}')).toBe(2);
    expect(scraped).not.toMatch(/^gateway_live_executions_total\{/m);
    expect(await gw.open()).toBe(0);
  });

  it('should refuse a too-deep subscription with the code HTTP gives the same depth', async () => {
    const gw = await startWsGateway({ limits: { maxDepth: 2 } });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(
      c,
      '1',
      'subscription { volumeChanged { volume { attachments { consumer { __typename } } } } }',
    );
    const http = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ volumes { nodes { attachments { state } } } }' }),
    });
    const httpCode = (await http.json()).errors[0].extensions.code;
    expect(httpCode).toBe('MAX_DEPTH_LIMIT');
    expect(e.extensions).toMatchObject({ code: httpCode, limit: 'maxDepth', max: 2 });
    await expectOpen(c);
  });

  it('should apply the token limit at parse, the alias limit and the cost limit with variables', async () => {
    const gw = await startWsGateway({ limits: { maxTokens: 40, maxAliases: 1, maxCost: 3 } });
    const c = await ackedClient(gw.wsUrl);
    const long = `subscription { ${Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    expect((await subscribeError(c, '1', long))[0].extensions.code).toBe('MAX_TOKENS_LIMIT');
    expect(
      (await subscribeError(c, '2', 'subscription { operationUpdated(id: "x") { a: state b: state } }'))[0].extensions
        .code,
    ).toBe('MAX_ALIASES_LIMIT');
    const [cost] = await subscribeError(
      c,
      '3',
      'subscription($id: ID!) { operationUpdated(id: $id) { target { __typename } } }',
      { id: 'x' },
    );
    expect(cost.extensions.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    await expectOpen(c);
  });

  it('should answer validation and variable errors with their codes', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    expect((await subscribeError(c, '1', 'subscription { nope }'))[0].extensions.code).toBe(
      'GRAPHQL_VALIDATION_FAILED',
    );
    expect((await subscribeError(c, '2', 'subscription {'))[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await subscribeError(c, '3', OP_SUB, {}))[0].extensions.code).toBe('BAD_USER_INPUT');
    await expectOpen(c);
  });

  it('should answer SUBSCRIPTIONS_UNAVAILABLE when no live hub runs', async () => {
    const gw = await startWsGateway({ live: false });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(c, '1', OP_SUB, { id: 'x' });
    expect(e.extensions.code).toBe('SUBSCRIPTIONS_UNAVAILABLE');
    await expectOpen(c);
  });

  it('should bound subscriptions per socket, and free a place on complete', async () => {
    const gw = await startWsGateway({ ws: { maxSubscriptionsPerSocket: 2 } });
    const c = await ackedClient(gw.wsUrl);
    for (const id of ['a', 'b']) await subscribed(c, id);
    const [e] = await subscribeError(c, 'c', SUB);
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionsPerSocket', max: 2 });
    expect(await gw.open()).toBe(2);
    c.send({ id: 'a', type: 'complete' });
    await gw.waitOpen(1, 'the completed stream to close');
    await subscribed(c, 'c');
    expect(await gw.open()).toBe(2);
    expect(await gw.metrics()).toMatch(/gateway_ws_refusals_total\{code="SUBSCRIPTION_LIMIT"\} 1/);
  });

  it('should bound subscriptions per credential across sockets, not those of other credentials', async () => {
    const gw = await startWsGateway({ ws: { maxSubscriptionsPerCredential: 3 } });
    const one = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': MGMT });
    const two = await ackedClient(gw.wsUrl, { 'x-nomad-token': MGMT });
    for (const id of ['a', 'b']) await subscribed(one, id);
    await subscribed(two, 'c');
    const [e] = await hubRefusal(two, 'd', SUB);
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionsPerCredential', max: 3 });
    const other = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': ANALYTICS_READ });
    await subscribed(other, 'x');
    expect(await gw.open()).toBe(4);
    // A socket that goes gives its places back.
    one.ws.close();
    await gw.waitOpen(2, "the closed socket's streams");
    await subscribed(two, 'd');
    expect(await gw.open()).toBe(3);
  });

  it('should bound subscriptions per client address across sockets and credentials, and free a place on complete', async () => {
    const gw = await startWsGateway({ live: { maxSubscriptionsPerAddress: 3 } });
    const one = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': MGMT });
    const two = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': ANALYTICS_READ });
    for (const id of ['a', 'b']) await subscribed(one, id);
    await subscribed(two, 'c');
    const [e] = await hubRefusal(two, 'd', SUB);
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionsPerAddress', max: 3 });
    expect(await gw.metrics()).toMatch(/gateway_ws_refusals_total\{code="SUBSCRIPTION_LIMIT"\} 1/);
    one.send({ id: 'a', type: 'complete' });
    await gw.waitOpen(2, 'the completed stream to close');
    await subscribed(two, 'd');
  });

  it('should bound the text one subscription keeps, and close the socket with 4400 on an id over 128 characters', async () => {
    const gw = await startWsGateway({ live: { maxSubscriptionBytes: 512 } });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await hubRefusal(c, 'big', `${SUB}\n#${'p'.repeat(600)}`);
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionBytes', max: 512 });
    await subscribed(c, 'i'.repeat(128));
    c.send({ id: 'i'.repeat(129), type: 'subscribe', payload: { query: SUB } });
    expect(await c.closed).toEqual({
      code: 4400,
      reason: 'Invalid message received: subscription id is over 128 characters',
    });
    await gw.waitOpen(0, "the closed socket's streams");
  });

  it('should serve only trusted documents when they are on, by hash or by listed text', async () => {
    const hash = createHash('sha256').update(SUB).digest('hex');
    const gw = await startWsGateway({
      http: { trustedDocuments: { documents: TrustedDocuments.fromJson({ [hash]: SUB }) } },
    });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(c, '1', 'subscription { volumeChanged { type } }');
    expect(e.extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    c.send({
      id: '2',
      type: 'subscribe',
      payload: { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } },
    });
    expect(await c.nextFor('2')).toMatchObject({
      type: 'next',
      payload: { data: { volumeChanged: { type: 'SUBSCRIBED' } } },
    });
    await subscribed(c, '3');
    expect(await gw.open()).toBe(2);
  });
});
