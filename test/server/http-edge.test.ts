/**
 * The HTTP edge with raw requests (node:http, and node:net where Node's client would refuse to
 * send it): oversized bodies and headers, malformed requests, CORS, subscriptions over HTTP and
 * automatic persisted queries each get a JSON answer with a typed code.
 */
import { createHash } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { ConfigError } from '../../adapters/contract/settings';
import { loadHttpEdgeConfig } from '../../server/http/config';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

let sim: NomadSimulator;
let gw: GatewayUnderTest;
let url: URL;

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 1);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  url = new URL(gw.gateway.url);
});
afterAll(disposeAll);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
  /** The body as received. */
  text: string;
  /** Whether the client saw `100 Continue` (it then sends the body). */
  continued: boolean;
}

/** One request with node:http; `body` is written in `chunks` pieces (chunked when no content-length is given). */
function send(o: {
  method?: string;
  path?: string;
  headers?: Record<string, string | number>;
  body?: Buffer;
  chunks?: number;
  target?: URL;
  waitForContinue?: boolean;
}): Promise<Answer> {
  const t = o.target ?? url;
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request(
      {
        host: t.hostname,
        port: t.port,
        method: o.method ?? 'POST',
        path: o.path ?? t.pathname,
        headers: o.headers ?? {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            /* not JSON: the assertion shows it */
          }
          resolve({ status: res.statusCode!, headers: res.headers, body, text, continued });
        });
      },
    );
    req.on('error', reject);
    // An early answer may arrive while the body is still going out; the write then fails, which is fine.
    req.on('continue', () => {
      continued = true;
      if (o.body) req.end(o.body);
    });
    if (o.waitForContinue) return;
    if (o.body) {
      const n = o.chunks ?? 1;
      const size = Math.ceil(o.body.length / n);
      for (let i = 0; i < n; i++) req.write(o.body.subarray(i * size, (i + 1) * size));
    }
    req.end();
  });
}

/** Raw bytes over TCP; the whole answer as text. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(Number(url.port), url.hostname, () => s.write(bytes));
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const jsonBodyOf = (text: string): any => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
const gqlBody = (query: string): Buffer => Buffer.from(JSON.stringify({ query }));

describe('answers', () => {
  it('should send a GraphQL answer with its length (not chunked) and cache-control: no-store, also for an error', async () => {
    for (const query of ['{ volumes(first: 1) { nodes { name } } }', '{ nope }']) {
      const body = Buffer.from(JSON.stringify({ query }));
      const a = await send({
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-nomad-token': 'any' },
        body,
      });
      expect(a.headers['cache-control']).toBe('no-store');
      expect(a.headers['transfer-encoding']).toBeUndefined();
      expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.text));
    }
  });
});

describe('request bodies', () => {
  const big = Buffer.alloc(2 * 1_048_576, 'a');

  it('should answer 413 JSON (no reset) to a Content-Length over the limit, and keep serving', async () => {
    const r = await send({ headers: { 'content-type': 'application/json', 'content-length': big.length }, body: big });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      errors: [
        {
          message: 'request body exceeds 1048576 bytes',
          extensions: { code: 'PAYLOAD_TOO_LARGE', maxBodyBytes: 1_048_576 },
        },
      ],
    });
    expect((await gw.gql('{ __typename }')).body.data).toEqual({ __typename: 'Query' });
  });

  it('should answer 413 JSON to a chunked body that grows over the limit', async () => {
    const r = await send({ headers: { 'content-type': 'application/json' }, body: big, chunks: 32 });
    expect(r.status).toBe(413);
    expect(r.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('should refuse an oversized body announced with Expect: 100-continue before the client sends it', async () => {
    const r = await send({
      headers: { 'content-type': 'application/json', 'content-length': big.length, expect: '100-continue' },
      body: big,
      waitForContinue: true,
    });
    expect(r.status).toBe(413);
    expect(r.continued).toBe(false);
    expect(r.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('should still serve a small body sent after Expect: 100-continue', async () => {
    const r = await send({
      headers: {
        'content-type': 'application/json',
        expect: '100-continue',
        'content-length': gqlBody('{ __typename }').length,
      },
      body: gqlBody('{ __typename }'),
      waitForContinue: true,
    });
    expect(r.continued).toBe(true);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ __typename: 'Query' });
  });

  it('should answer 400 BAD_REQUEST to a body that is not JSON', async () => {
    const r = await send({ headers: { 'content-type': 'application/json' }, body: Buffer.from('{ nope') });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

describe('malformed requests (node:net)', () => {
  it('should answer 431 JSON to headers over MAX_HEADER_BYTES', async () => {
    const out = await raw(`POST /graphql HTTP/1.1\r\nhost: x\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(out).toMatch(/^HTTP\/1\.1 431 /);
    expect(out.toLowerCase()).toContain('content-type: application/json');
    expect(jsonBodyOf(out).errors[0].extensions).toEqual({ code: 'REQUEST_HEADERS_TOO_LARGE', maxHeaderBytes: 16_384 });
    const metrics = await (await fetch(gw.gateway.url.replace(/\/graphql$/, '/metrics'))).text();
    expect(metrics).toMatch(/gateway_http_refusals_total\{code="REQUEST_HEADERS_TOO_LARGE",status="431"\} [1-9]/);
  });

  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
    ['a header without a colon', 'GET /healthz HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n'],
    ['a bad chunk size', 'POST /graphql HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'],
  ])('should answer 400 JSON to %s', async (_, bytes) => {
    const out = await raw(bytes);
    expect(out).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonBodyOf(out)).toEqual({
      errors: [{ message: 'malformed HTTP request', extensions: { code: 'BAD_REQUEST' } }],
    });
  });
});

describe('operations the gateway does not run', () => {
  it('should refuse a subscription over HTTP (POST and GET) with 400 SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP before any backend call', async () => {
    sim.clearRequests();
    const post = await gw.gql('subscription Watch { volumes { nodes { id } } }');
    expect(post.status).toBe(400);
    expect(post.body).toEqual({
      errors: [
        {
          message:
            'subscriptions are not served as a JSON answer: ask for a stream (Accept: text/event-stream, or multipart/mixed;subscriptionSpec=1.0) or use graphql-ws',
          extensions: { code: 'SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP' },
        },
      ],
    });
    const get = await fetch(
      `${gw.gateway.url}?query=${encodeURIComponent('query A { __typename } subscription B { __typename }')}&operationName=B`,
      { headers: { 'apollo-require-preflight': 'true' } },
    );
    expect(get.status).toBe(400);
    expect((await get.json()).errors[0].extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP');
    // The query of the same document is served.
    expect(
      (
        await fetch(
          `${gw.gateway.url}?query=${encodeURIComponent('query A { __typename } subscription B { __typename }')}&operationName=A`,
          { headers: { 'apollo-require-preflight': 'true' } },
        )
      ).status,
    ).toBe(200);
    expect(sim.requests()).toEqual([]);
  });
});

describe('automatic persisted queries', () => {
  const query = '{ storageBackends { id } }';
  const hash = createHash('sha256').update(query).digest('hex');
  const apq = (body: Record<string, unknown>) =>
    fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it.each([
    ['another hash', '0'.repeat(64)],
    ['the hash in upper case (APQ hashes are lower-case hex)', hash.toUpperCase()],
  ])('should answer %s with 400 PERSISTED_QUERY_HASH_MISMATCH', async (_, sha256Hash) => {
    const r = await apq({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      errors: [
        {
          message: 'extensions.persistedQuery.sha256Hash is not the SHA-256 of the query text',
          extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' },
        },
      ],
    });
  });

  it('should still answer PERSISTED_QUERY_NOT_FOUND for an unknown hash, then serve it once registered', async () => {
    const miss = await apq({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(miss.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const register = await apq({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(register.status).toBe(200);
    expect(register.body.data.storageBackends).toEqual([{ id: 'east' }]);
    const hit = await apq({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(hit.body.data.storageBackends).toEqual([{ id: 'east' }]);
  });
});

describe('CORS', () => {
  const preflight = (target: URL, origin: string, headers = 'content-type, x-nomad-token-east') =>
    send({
      method: 'OPTIONS',
      target,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
    });

  it('should be off by default: no CORS headers on a preflight or a request', async () => {
    const p = await preflight(url, 'https://app.example.com');
    expect(p.headers['access-control-allow-origin']).toBeUndefined();
    const r = await send({
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json' },
      body: gqlBody('{ __typename }'),
    });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('should answer preflights from allowed origins with the headers the gateway reads, and nothing to other origins', async () => {
    const on = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { cors: { origins: ['https://app.example.com'], credentials: true, maxAgeSeconds: 120 } },
    });
    const target = new URL(on.gateway.url);
    const p = await preflight(
      target,
      'https://app.example.com',
      'Content-Type, X-Nomad-Token-East, X-Request-Id, X-Evil',
    );
    expect(p.status).toBe(204);
    expect(p.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(p.headers['access-control-allow-credentials']).toBe('true');
    expect(p.headers['access-control-max-age']).toBe('120');
    expect(p.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    const allowed = String(p.headers['access-control-allow-headers']).split(', ');
    expect(allowed).toEqual(
      expect.arrayContaining([
        'content-type',
        'x-nomad-token-east',
        'x-request-id',
        'apollo-require-preflight',
        'x-auth-token',
      ]),
    );
    expect(allowed).not.toContain('x-evil');
    expect(p.headers.vary).toBe('Origin');

    const other = await preflight(target, 'https://evil.example.com');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();

    const r = await send({
      target,
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json' },
      body: gqlBody('{ __typename }'),
    });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(r.headers['access-control-expose-headers']).toContain('retry-after');
    // CORS is not access control: the answer is sent, the browser keeps it from the page.
    const fromOther = await send({
      target,
      headers: { origin: 'https://evil.example.com', 'content-type': 'application/json' },
      body: gqlBody('{ __typename }'),
    });
    expect(fromOther.status).toBe(200);
    expect(fromOther.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('should refuse bad CORS settings naming them', () => {
    expect(() => loadHttpEdgeConfig({ CORS_ORIGINS: 'https://app.example.com/' }, {})).toThrow(ConfigError);
    expect(() => loadHttpEdgeConfig({ CORS_ORIGINS: 'app.example.com' }, {})).toThrow(/^CORS_ORIGINS: /);
    expect(() => loadHttpEdgeConfig({ CORS_ORIGINS: '*', CORS_CREDENTIALS: 'true' }, {})).toThrow(
      /^CORS_CREDENTIALS: /,
    );
    expect(() =>
      loadHttpEdgeConfig({}, { http: { cors: { origins: 'https://a.example.com', maxAgeSeconds: -1 } } }),
    ).toThrow(/^http\.cors\.maxAgeSeconds: /);
    expect(loadHttpEdgeConfig({ CORS_ORIGINS: 'https://a.example.com, http://localhost:3000' }, {}).cors).toEqual({
      origins: ['https://a.example.com', 'http://localhost:3000'],
      credentials: false,
      maxAgeSeconds: 600,
    });
  });
});
