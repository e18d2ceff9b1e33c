/**
 * What a `subscribe` may run: subscriptions only, under the same limits as HTTP (same codes), and
 * the socket layer's own subscription quotas. Every refusal is an `error` message for that id;
 * the socket stays open.
 */
import { ackedClient, MGMT, OP_SUB, startWsGateway, stopAll, waitFor, type RawClient } from './helpers';
import { createHash } from 'node:crypto';
import { TrustedDocuments } from '../../server/http/trusted-documents';
import { ANALYTICS_READ } from '../support/harness';

afterEach(stopAll);

async function subscribeError(c: RawClient, id: string, query: string, variables?: Record<string, unknown>): Promise<any[]> {
  c.send({ id, type: 'subscribe', payload: { query, variables } });
  const m = await c.next();
  expect(m).toMatchObject({ id, type: 'error' });
  return m.payload;
}

/** Still open: a ping is answered. */
async function expectOpen(c: RawClient): Promise<void> {
  c.send({ type: 'ping' });
  expect(await c.next()).toEqual({ type: 'pong' });
}

describe('subscribe over graphql-ws', () => {
  it('should refuse a query and a mutation with a clear error, and keep the socket open', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    const [q] = await subscribeError(c, 'q', '{ __typename }');
    expect(q.extensions.code).toBe('OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET');
    expect(q.message).toMatch(/HTTP POST/);
    const [m] = await subscribeError(c, 'm', 'mutation { deleteVolume(input: { volumeId: "x" }) { operation { id } } }');
    expect(m.extensions.code).toBe('OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET');
    await expectOpen(c);
    expect(gw.hub.calls).toHaveLength(0);
  });

  it('should refuse a too-deep subscription with the code HTTP gives the same depth', async () => {
    const gw = await startWsGateway({ limits: { maxDepth: 2 } });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(c, '1', 'subscription { volumeChanged { volume { attachments { consumer { __typename } } } } }');
    const http = await fetch(gw.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ volumes { nodes { attachments { state } } } }' }) });
    const httpCode = ((await http.json()) as any).errors[0].extensions.code;
    expect(httpCode).toBe('MAX_DEPTH_LIMIT');
    expect(e.extensions).toMatchObject({ code: httpCode, limit: 'maxDepth', max: 2 });
    await expectOpen(c);
  });

  it('should apply the token limit at parse, the alias limit and the cost limit with variables', async () => {
    const gw = await startWsGateway({ limits: { maxTokens: 40, maxAliases: 1, maxCost: 3 } });
    const c = await ackedClient(gw.wsUrl);
    const long = `subscription { ${Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    expect((await subscribeError(c, '1', long))[0].extensions.code).toBe('MAX_TOKENS_LIMIT');
    expect((await subscribeError(c, '2', 'subscription { operationUpdated(id: "x") { a: state b: state } }'))[0].extensions.code).toBe('MAX_ALIASES_LIMIT');
    const [cost] = await subscribeError(c, '3', 'subscription($id: ID!) { operationUpdated(id: $id) { target { __typename } } }', { id: 'x' });
    expect(cost.extensions.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    await expectOpen(c);
  });

  it('should answer validation and variable errors with their codes', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    expect((await subscribeError(c, '1', 'subscription { nope }'))[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await subscribeError(c, '2', 'subscription {'))[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await subscribeError(c, '3', OP_SUB, {}))[0].extensions.code).toBe('BAD_USER_INPUT');
    await expectOpen(c);
  });

  it('should answer SUBSCRIPTIONS_UNAVAILABLE when no live hub runs', async () => {
    const gw = await startWsGateway({ hub: null });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(c, '1', OP_SUB, { id: 'x' });
    expect(e.extensions.code).toBe('SUBSCRIPTIONS_UNAVAILABLE');
    await expectOpen(c);
  });

  it('should bound subscriptions per socket, and free a place on complete', async () => {
    const gw = await startWsGateway({ ws: { maxSubscriptionsPerSocket: 2 } });
    const c = await ackedClient(gw.wsUrl);
    for (const id of ['a', 'b']) c.send({ id, type: 'subscribe', payload: { query: OP_SUB, variables: { id } } });
    await waitFor(() => gw.hub.open === 2, 'two subscriptions');
    const [e] = await subscribeError(c, 'c', OP_SUB, { id: 'c' });
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionsPerSocket', max: 2 });
    c.send({ id: 'a', type: 'complete' });
    await waitFor(() => gw.hub.open === 1, 'the completed stream to close');
    c.send({ id: 'c', type: 'subscribe', payload: { query: OP_SUB, variables: { id: 'c' } } });
    await waitFor(() => gw.hub.open === 2, 'the new subscription');
    expect(await gw.metrics()).toMatch(/gateway_ws_refusals_total\{code="SUBSCRIPTION_LIMIT"\} 1/);
  });

  it('should bound subscriptions per credential across sockets, not those of other credentials', async () => {
    const gw = await startWsGateway({ ws: { maxSubscriptionsPerCredential: 3 } });
    const one = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': MGMT });
    const two = await ackedClient(gw.wsUrl, { 'x-nomad-token': MGMT });
    for (const id of ['a', 'b']) one.send({ id, type: 'subscribe', payload: { query: OP_SUB, variables: { id } } });
    two.send({ id: 'c', type: 'subscribe', payload: { query: OP_SUB, variables: { id: 'c' } } });
    await waitFor(() => gw.hub.open === 3, 'three subscriptions');
    const [e] = await subscribeError(two, 'd', OP_SUB, { id: 'd' });
    expect(e.extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: 'maxSubscriptionsPerCredential', max: 3 });
    const other = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': ANALYTICS_READ });
    other.send({ id: 'x', type: 'subscribe', payload: { query: OP_SUB, variables: { id: 'x' } } });
    await waitFor(() => gw.hub.open === 4, 'another credential\'s subscription');
    // A socket that goes gives its places back.
    one.ws.close();
    await waitFor(() => gw.hub.open === 2, 'the closed socket\'s streams');
    two.send({ id: 'd', type: 'subscribe', payload: { query: OP_SUB, variables: { id: 'd' } } });
    await waitFor(() => gw.hub.open === 3, 'a freed place');
  });

  it('should serve only trusted documents when they are on, by hash or by listed text', async () => {
    const hash = createHash('sha256').update(OP_SUB).digest('hex');
    const gw = await startWsGateway({ http: { trustedDocuments: { documents: TrustedDocuments.fromJson({ [hash]: OP_SUB }) } } });
    const c = await ackedClient(gw.wsUrl);
    const [e] = await subscribeError(c, '1', 'subscription { operationUpdated(id: "x") { state } }');
    expect(e.extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    c.send({ id: '2', type: 'subscribe', payload: { query: '', variables: { id: 'x' }, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } } });
    c.send({ id: '3', type: 'subscribe', payload: { query: OP_SUB, variables: { id: 'y' } } });
    await waitFor(() => gw.hub.open === 2, 'both listed subscriptions');
  });
});
