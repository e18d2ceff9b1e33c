/**
 * From generated operations to HTTP requests: credentials (valid, missing or hostile header
 * values), POST JSON or GET with query parameters, and raw requests that are not GraphQL at all
 * (bad JSON, wrong content types and methods, odd paths, oversized bodies, persisted-query tricks).
 */
import fc from 'fast-check';
import type { RawRequest } from './http-client';
import { hostileHeaderValue, longString, mixedString } from './hostile-strings';
import type { GraphQLCall, LabelledCall } from './schema-arbitraries';
import type { Vocabulary } from './world';

/** A generated request and what it was meant to test, for reports. */
export interface FuzzCase {
  label: string;
  request: RawRequest;
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];

/** Valid credentials for every backend, most of the time. */
export const credentials = (v: Vocabulary): fc.Arbitrary<Array<[string, string]>> =>
  fc
    .oneof({ weight: 8, arbitrary: fc.constantFrom(...v.credentials) }, { weight: 1, arbitrary: fc.constant({}) })
    .map((h) => Object.entries(h));

/** POST (mostly) or GET of a GraphQL call with the given headers. */
export function graphqlRequest(
  call: GraphQLCall,
  headers: Array<[string, string]>,
  method: 'POST' | 'GET' = 'POST',
): RawRequest {
  if (method === 'GET') {
    const q = new URLSearchParams({ query: call.query });
    if (call.variables !== undefined) q.set('variables', JSON.stringify(call.variables));
    if (call.operationName) q.set('operationName', call.operationName);
    // Apollo's CSRF prevention wants a non-simple header on GET.
    return {
      method: 'GET',
      target: `/graphql?${q.toString()}`,
      headers: [['apollo-require-preflight', 'true'], ...headers],
    };
  }
  return { method: 'POST', target: '/graphql', headers: [JSON_TYPE, ...headers], body: JSON.stringify(call) };
}

/** Operations sent with valid credentials, as POST or (now and then) GET. */
export function operationCases(calls: fc.Arbitrary<LabelledCall>, v: Vocabulary): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      calls,
      credentials(v),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant('POST' as const) },
        { weight: 1, arbitrary: fc.constant('GET' as const) },
      ),
    )
    .map(([{ label, call }, headers, method]) => ({
      label,
      request: graphqlRequest(call, headers, method),
    }));
}

/** Labels every call of `calls` with `label`. */
export const labelled = (label: string, calls: fc.Arbitrary<GraphQLCall>): fc.Arbitrary<LabelledCall> =>
  calls.map((call) => ({ label, call }));

/** Credential and request-id headers with hostile values, on operations that reach the backends. */
export function headerCases(calls: fc.Arbitrary<GraphQLCall>, v: Vocabulary): fc.Arbitrary<FuzzCase> {
  const tokens = v.credentials.flatMap((c) => Object.values(c));
  const names = [
    'x-nomad-token',
    'x-auth-token',
    'x-request-id',
    ...v.backends.flatMap((b) => [`x-nomad-token-${b}`, `x-auth-token-${b}`]),
    'X-Nomad-Token',
    'authorization',
  ];
  const hostile = fc.array(fc.tuple(fc.constantFrom(...names), hostileHeaderValue(tokens)), {
    minLength: 1,
    maxLength: 3,
  });
  return fc.tuple(calls, credentials(v), hostile).map(([call, base, bad]) => ({
    label: 'hostile headers',
    // The hostile values come after the valid ones: repeated names test which one wins.
    request: graphqlRequest(call, [...base, ...bad]),
  }));
}

/** Requests that are not well-formed GraphQL over HTTP. */
export function rawCases(
  calls: fc.Arbitrary<GraphQLCall>,
  v: Vocabulary,
  maxBodyBytes: number,
): fc.Arbitrary<FuzzCase> {
  const auth = credentials(v);
  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=latin1',
    'text/plain',
    'application/graphql',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/graphql-response+json',
    '',
    'application/json\u0000',
  );
  const badBody = fc.oneof(
    fc.constantFrom(
      '{',
      '[]',
      '[{"query":"{__typename}"}]',
      'null',
      '1',
      '"x"',
      '{"query":1}',
      '{"query":null}',
      '{"query":"{__typename}","variables":"x"}',
      '{"query":"{__typename}","extensions":{"persistedQuery":{"version":1,"sha256Hash":"00"}}}',
      '{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38"}}}',
      '{"query":"{__typename}","__proto__":{"x":1}}',
      '\uFEFF{"query":"{__typename}"}',
    ),
    mixedString(40),
    fc.json({ maxDepth: 3 }),
    calls.map((c) => JSON.stringify(c).slice(0, -1)),
  );
  const oversized = fc
    .integer({ min: 1, max: 64 * 1024 })
    .map((extra) => JSON.stringify({ query: `{ __typename }`, variables: { pad: 'x'.repeat(maxBodyBytes + extra) } }));
  const bodies = fc
    .tuple(
      fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
      contentType,
      fc.oneof({ weight: 8, arbitrary: badBody }, { weight: 1, arbitrary: oversized }),
      auth,
    )
    .map(([method, type, body, headers]): FuzzCase => ({
      label: 'raw body',
      request: {
        method,
        target: '/graphql',
        headers: [...(type ? [['content-type', type] as [string, string]] : []), ...headers],
        body,
      },
    }));
  const path = fc.constantFrom(
    '/graphql',
    '/graphql/',
    '//graphql',
    '/GRAPHQL',
    '/graphql/../graphql',
    '/%2e%2e/graphql',
    '/healthz',
    '/readyz',
    '/metrics',
    '/graphiql/assets/../../package.json',
    '/x',
    '/graphql%00',
  );
  const query = fc.oneof(
    calls.map((c) =>
      new URLSearchParams({
        query: c.query,
        ...(c.variables ? { variables: JSON.stringify(c.variables) } : {}),
      }).toString(),
    ),
    fc.constantFrom(
      'query=%zz',
      'query=%7B__typename%7D&query=%7B__typename%7D',
      'query=',
      'variables=%7B',
      'query=%7B__typename%7D&extensions=%7B%22persistedQuery%22%3A1%7D',
      'query=%7B__typename%7D&operationName=%00',
    ),
    // URLSearchParams, not encodeURIComponent: the latter throws on lone surrogates.
    longString(20_000).map((s) => new URLSearchParams({ query: s }).toString()),
  );
  const gets = fc
    .tuple(
      fc.constantFrom('GET', 'HEAD'),
      path,
      query,
      fc.option(fc.constantFrom('true', '1', ''), { nil: undefined }),
      fc.constantFrom('application/json', 'text/html', '*/*', 'application/graphql-response+json'),
      auth,
    )
    .map(([method, p, q, preflight, accept, headers]): FuzzCase => ({
      label: 'raw GET',
      request: {
        method,
        target: `${p}?${q}`,
        headers: [
          ['accept', accept],
          ...(preflight === undefined ? [] : [['apollo-require-preflight', preflight] as [string, string]]),
          ...headers,
        ],
      },
    }));
  return fc.oneof(bodies, gets);
}
