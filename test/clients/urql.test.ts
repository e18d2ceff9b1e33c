/**
 * urql (`@urql/core` 6) against the gateway over HTTP, as docs/clients.md configures it:
 * - its default `fetchExchange` sends queries as GET (`preferGetMethod: 'within-url-limit'`) with
 *   no header a preflight forces; anonymous callers may read Nomad, so the default configuration
 *   must be served (it got a 400 about CSRF before issue 31), with or without a token;
 * - under `CSRF_PREVENTION=strict` a GET with a token needs `apollo-require-preflight`;
 * - mutations go as POST with `content-type: application/json`;
 * - subscriptions over graphql-ws through `subscriptionExchange`, and over SSE with
 *   `fetchSubscriptions: true`.
 */
import { Client, fetchExchange, subscriptionExchange, type OperationResult } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';
import { claim, startWsGateway, stopAll, type WsGateway } from '../ws/helpers';

const VOLUMES = '{ volumes(first: 2) { nodes { id name } } }';
const NAMES = {
  volumes: { nodes: [expect.objectContaining({ name: 'vol 0' }), expect.objectContaining({ name: 'vol 1' })] },
};
const CLAIMS = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { name } } }';

/** The methods urql used, from the requests it sent. */
function recordingFetch(methods: string[]): typeof fetch {
  return (input, init) => {
    methods.push(init?.method ?? 'GET');
    return fetch(input, init);
  };
}

describe('urql over HTTP', () => {
  let standard: GatewayUnderTest;
  let strict: GatewayUnderTest;

  beforeAll(async () => {
    const sim = await startNomad({ acl: { enabled: true, anonymousRead: '*' } });
    seedVolumes(sim, 2);
    standard = await startGatewayFor([{ id: 'east', url: sim.url }]);
    strict = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { csrfPrevention: 'strict' } });
  });
  afterAll(disposeAll);

  const client = (url: string, headers: Record<string, string>, methods: string[]) =>
    new Client({ url, exchanges: [fetchExchange], fetch: recordingFetch(methods), fetchOptions: { headers } });

  it("should serve urql's default configuration: queries as GET, anonymous or with a token", async () => {
    const callers: Array<Record<string, string>> = [{}, { 'X-Nomad-Token': MGMT }];
    for (const headers of callers) {
      const methods: string[] = [];
      const r = await client(standard.gateway.url, headers, methods).query(VOLUMES, {}).toPromise();
      expect({ headers, error: r.error?.message, data: r.data }).toEqual({ headers, error: undefined, data: NAMES });
      expect(methods).toEqual(['GET']);
    }
  });

  it('should send mutations as POST with JSON, served', async () => {
    const methods: string[] = [];
    const r = await client(standard.gateway.url, { 'X-Nomad-Token': MGMT }, methods)
      .mutation('mutation { deleteVolume(input: { volumeId: "bm9wZQ" }) { clientMutationId } }', {})
      .toPromise();
    // Past CSRF prevention: the mutation ran and its input was refused by the schema's own rules.
    expect(methods).toEqual(['POST']);
    expect(r.error?.message).not.toMatch(/CSRF/);
    expect(r.error?.graphQLErrors.length).toBeGreaterThan(0);
  });

  it('under CSRF_PREVENTION=strict, should serve an anonymous GET, and a GET with a token only with apollo-require-preflight', async () => {
    const anonymous = await client(strict.gateway.url, {}, []).query(VOLUMES, {}).toPromise();
    expect(anonymous.data).toEqual(NAMES);
    const bare = await client(strict.gateway.url, { 'X-Nomad-Token': MGMT }, []).query(VOLUMES, {}).toPromise();
    expect(bare.error?.graphQLErrors[0]?.extensions.code).toBe('CSRF_PREFLIGHT_REQUIRED');
    const methods: string[] = [];
    const headers = { 'X-Nomad-Token': MGMT, 'apollo-require-preflight': 'true' };
    const ok = await client(strict.gateway.url, headers, methods).query(VOLUMES, {}).toPromise();
    expect({ error: ok.error?.message, data: ok.data }).toEqual({ error: undefined, data: NAMES });
    expect(methods).toEqual(['GET']);
  });
});

describe('urql subscriptions', () => {
  let gw: WsGateway;
  let ws: WsClient;

  beforeAll(async () => {
    gw = await startWsGateway();
    ws = createWsClient({ url: gw.wsUrl, webSocketImpl: WebSocket, connectionParams: { 'X-Nomad-Token': MGMT } });
  });
  afterAll(async () => {
    await ws?.dispose();
    await stopAll();
  });

  /** Subscribes through `client`, runs `trigger` once SUBSCRIBED, and resolves with the next event. */
  const firstEvent = (client: Client, trigger: () => void): Promise<OperationResult> =>
    new Promise((resolve) => {
      const subscription = client.subscription(CLAIMS, {}).subscribe((r) => {
        if (r.data?.volumeChanged?.type === 'SUBSCRIBED') return trigger();
        resolve(r);
        // Not from inside urql's own callback: the fetch it aborts then throws its AbortError into the caller.
        setTimeout(() => subscription.unsubscribe(), 0);
      });
    });

  it('should deliver events over graphql-ws through subscriptionExchange', async () => {
    const client = new Client({
      url: gw.gateway.url,
      exchanges: [
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
          }),
        }),
        fetchExchange,
      ],
    });
    const r = await firstEvent(client, () => void claim(gw.sim, ['vol-001']));
    expect(r.data).toEqual({ volumeChanged: { type: 'CLAIMED', volume: { name: 'vol 1' } } });
    await gw.waitOpen(0, 'the subscription to end');
  });

  it('should deliver events over SSE with fetchSubscriptions', async () => {
    const client = new Client({
      url: gw.gateway.url,
      exchanges: [fetchExchange],
      fetchSubscriptions: true,
      fetchOptions: { headers: { 'X-Nomad-Token': MGMT } },
    });
    const r = await firstEvent(client, () => void claim(gw.sim, ['vol-002'], 'job-2'));
    expect(r.data).toEqual({ volumeChanged: { type: 'CLAIMED', volume: { name: 'vol 2' } } });
    await gw.waitOpen(0, 'the stream to end');
  });
});
