/**
 * Compiled execution puts its own builder in place of Apollo's per-request context for executors
 * (server/execution/lean-gateway-context.ts): it must be in place on the locked Apollo version once
 * a compiled gateway starts, and an executor must see the same request and change the response
 * the same way as with Apollo's builder (served over HTTP by Apollo's standalone server, once
 * with each builder).
 */
import { ApolloServer, type ApolloServerOptionsWithGateway, type BaseContext } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSchema } from 'graphql';
import { dirname, join } from 'node:path';
import { installLeanGatewayContext, leanGatewayContextInstalled, leanGatewayRequestContext } from '../../server/execution/lean-gateway-context';
import { disposeAll, startGatewayFor, startNomad } from '../support/harness';

const builderModule = (): { makeGatewayGraphQLRequestContext: unknown } =>
  require(join(dirname(require.resolve('@apollo/server')), 'utils', 'makeGatewayGraphQLRequestContext.js')) as { makeGatewayGraphQLRequestContext: unknown };

const original = builderModule().makeGatewayGraphQLRequestContext;
afterEach(() => void (builderModule().makeGatewayGraphQLRequestContext = original));
afterAll(disposeAll);

/** A gateway whose executor answers with what it saw and sets a status and a header. */
function probeGateway(): ApolloServerOptionsWithGateway<BaseContext>['gateway'] {
  const schema = buildSchema('type Query { seen(a: Int): String }');
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: 'type Query { seen(a: Int): String }' });
      return () => undefined;
    },
    async load() {
      return {
        async executor(rc) {
          const before = rc.response?.http?.status ?? null;
          if (rc.response?.http) {
            rc.response.http.status = 203;
            rc.response.http.headers.set('x-executor', 'was-here');
            rc.response.http.headers.append('x-executor', 'twice');
          }
          const h = rc.request.http!;
          const seen = {
            query: rc.request.query,
            operationName: rc.request.operationName,
            variables: rc.request.variables,
            method: h.method,
            url: h.url,
            probe: h.headers.get('x-probe'),
            missing: h.headers.get('x-missing'),
            hasProbe: h.headers.has('x-probe'),
            statusBefore: before,
            statusAfter: rc.response?.http?.status,
            contextFoo: (rc.context as { foo?: string }).foo,
            resolvedName: rc.operationName,
            hasDocument: rc.document !== undefined,
            hasSchema: rc.schema !== undefined,
          };
          return { data: { seen: JSON.stringify(seen) } };
        },
      };
    },
    async stop() {},
  };
}

async function answerThrough(): Promise<{ status: number; header: string | null; body: unknown }> {
  const server = new ApolloServer<{ foo: string }>({ gateway: probeGateway() });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' }, context: async () => ({ foo: 'bar' }) });
  try {
    const res = await fetch(`${url}?probe=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-probe': 'hello' },
      body: JSON.stringify({ query: 'query Probe($a: Int) { seen(a: $a) }', operationName: 'Probe', variables: { a: 1 } }),
    });
    return { status: res.status, header: res.headers.get('x-executor'), body: await res.json() };
  } finally {
    await server.stop();
  }
}

test('an executor sees the same request and sets status and headers as with Apollo’s own builder', async () => {
  const apollos = await answerThrough();
  expect(installLeanGatewayContext()).toBe(true);
  expect(builderModule().makeGatewayGraphQLRequestContext).toBe(leanGatewayRequestContext);
  const lean = await answerThrough();
  expect(lean).toEqual(apollos);
  // Sanity: the probe really saw the request and changed the response.
  expect(apollos.status).toBe(203);
  expect(apollos.header).toBe('was-here, twice');
  expect(JSON.parse((apollos.body as { data: { seen: string } }).data.seen)).toMatchObject({ probe: 'hello', missing: null, url: 'https://unknown-url.invalid/?probe=1', contextFoo: 'bar', statusBefore: null, statusAfter: 203 });
});

test('the lean builder puts no accessor on the objects it makes per request', () => {
  const head = { headers: new Map() as never, status: undefined as number | undefined };
  const made = leanGatewayRequestContext({ request: {}, response: { http: head }, contextValue: {}, schema: {}, metrics: {}, overallCachePolicy: {}, requestIsBatched: false }, { logger: {}, cache: {} }, {}) as { response: { http: { status?: number } } };
  for (const o of [made, made.response, made.response.http]) for (const d of Object.values(Object.getOwnPropertyDescriptors(o))) expect(d.get ?? d.set).toBeUndefined();
  made.response.http.status = 500;
  expect(head.status).toBe(500);
});

test('a gateway with compiled execution runs with the lean builder in place', async () => {
  const sim = await startNomad();
  builderModule().makeGatewayGraphQLRequestContext = original;
  expect(leanGatewayContextInstalled()).toBe(false);
  const gw = await startGatewayFor([{ id: 'east', url: sim.url }], { executionEngine: 'compiled' });
  expect(leanGatewayContextInstalled()).toBe(true);
  const res = await fetch(gw.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
  expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
});
