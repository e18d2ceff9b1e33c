/**
 * Per-caller rate and concurrency limits over HTTP against a real gateway and simulator: 429 with
 * Retry-After and a typed code, other callers unaffected, served again after waiting; rotating
 * invented tokens still spends the address's budget; the limiter's memory stays bounded.
 */
import { randomUUID } from 'node:crypto';
import { CallerLimiter } from '../../domain/caller-limiter';
import { callerIdentity } from '../../server/http/caller-identity';
import { loadHttpEdgeConfig } from '../../server/http/config';
import { ConfigError } from '../../adapters/contract/settings';
import type { NomadSimulator } from '../../simulators/nomad';
import { ANALYTICS_READ, MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad } from '../support/harness';

let sim: NomadSimulator;
beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 2);
});
afterAll(disposeAll);

/** POST `query`; status, Retry-After and body. */
async function post(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

const A = { 'x-nomad-token': MGMT };
const B = { 'x-nomad-token': ANALYTICS_READ };

describe('per-caller limits', () => {
  it('should refuse a caller over its request rate with 429, Retry-After and RATE_LIMITED, serve other callers, and serve it again after waiting', async () => {
    const { gateway } = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { rateLimit: { caller: { requestsPerSecond: 1, burst: 3, maxInFlight: 0 } } },
    });
    for (let i = 0; i < 3; i++) expect((await post(gateway.url, '{ __typename }', A)).status).toBe(200);
    const refused = await post(gateway.url, '{ __typename }', A);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toEqual([
      {
        message: expect.stringContaining('too many requests'),
        extensions: { code: 'RATE_LIMITED', limit: 'requestRate', scope: 'caller', retryAfterSeconds: 1 },
      },
    ]);
    const metrics = await (await fetch(gateway.url.replace(/\/graphql$/, '/metrics'))).text();
    expect(metrics).toContain('gateway_http_refusals_total{code="RATE_LIMITED",status="429"} 1');
    // Another token, and an anonymous caller, have budgets of their own.
    expect((await post(gateway.url, '{ __typename }', B)).status).toBe(200);
    expect((await post(gateway.url, '{ __typename }')).status).toBe(200);
    await new Promise((r) => setTimeout(r, Number(refused.retryAfter) * 1000 + 100));
    const again = await post(gateway.url, '{ __typename }', A);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ __typename: 'Query' });
  });

  it('should refuse a caller over its in-flight cap with 429 while its requests run, serve others meanwhile, and serve it once they finish', async () => {
    const { gateway } = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { rateLimit: { caller: { requestsPerSecond: 0, maxInFlight: 2 } } },
    });
    sim.clearRequests();
    sim.setLatency(1500);
    try {
      const slow = [
        post(gateway.url, '{ volumes(first: 1) { nodes { nativeId } } }', A),
        post(gateway.url, '{ volumes(first: 1) { nodes { nativeId } } }', A),
      ];
      // Both are in flight once the simulator has seen both of their calls.
      for (let i = 0; i < 100 && sim.requests().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(sim.requests().length).toBeGreaterThanOrEqual(2);
      const third = await post(gateway.url, '{ __typename }', A);
      expect(third.status).toBe(429);
      expect(third.retryAfter).toBe('1');
      expect(third.body.errors[0].extensions).toEqual({
        code: 'RATE_LIMITED',
        limit: 'concurrentRequests',
        scope: 'caller',
        retryAfterSeconds: 1,
      });
      expect((await post(gateway.url, '{ __typename }', B)).status).toBe(200);
      for (const r of await Promise.all(slow)) expect(r.status).toBe(200);
    } finally {
      sim.setLatency(0);
    }
    expect((await post(gateway.url, '{ __typename }', A)).status).toBe(200);
  });

  it('should charge every request to its address too, so rotating invented tokens is refused with scope "address"', async () => {
    const { gateway } = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: {
        rateLimit: {
          caller: { requestsPerSecond: 1, burst: 2 },
          address: { requestsPerSecond: 1, burst: 5, maxInFlight: 0 },
        },
      },
    });
    const statuses: number[] = [];
    let last: any;
    for (let i = 0; i < 8; i++) {
      const r = await post(gateway.url, '{ __typename }', { 'x-nomad-token': randomUUID() });
      statuses.push(r.status);
      last = r;
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(last.body.errors[0].extensions).toMatchObject({
      code: 'RATE_LIMITED',
      limit: 'requestRate',
      scope: 'address',
    });
  });

  it('should key anonymous callers by address, taken from X-Forwarded-For only as far as TRUST_PROXY_HOPS allows', async () => {
    const { gateway } = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { trustProxyHops: 1, rateLimit: { caller: { requestsPerSecond: 0.01, burst: 1 } } },
    });
    const from = (xff: string) => post(gateway.url, '{ __typename }', { 'x-forwarded-for': xff });
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
    expect((await from('203.0.113.2')).status).toBe(200);
    // A client-set entry to the left of what the proxy appended changes nothing.
    const spoofed = await from('198.51.100.9, 203.0.113.1');
    expect(spoofed.status).toBe(429);
    expect(Number(spoofed.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('should let the default limits through 50 parallel requests of one caller (as the suite and bench do)', async () => {
    const { gateway } = await startGatewayFor([{ id: 'east', url: sim.url }]);
    const all = await Promise.all(
      Array.from({ length: 50 }, () => post(gateway.url, '{ volumes(first: 1) { nodes { nativeId } } }', A)),
    );
    expect(all.map((r) => r.status)).toEqual(Array(50).fill(200));
  });
});

describe('caller keys and the limiter table', () => {
  it('should key by a fingerprint of the credential headers, never the raw token, and by address when anonymous', () => {
    const withToken = callerIdentity({ 'x-nomad-token': 's3cret-token' }, '::ffff:10.1.2.3');
    expect(withToken.callerKey).toMatch(/^cred:[0-9a-f]{64}$/);
    expect(withToken.callerKey).not.toContain('s3cret');
    expect(withToken.addressKey).toBe('addr:10.1.2.3');
    expect(callerIdentity({ 'x-nomad-token': 's3cret-token' }, '10.9.9.9').callerKey).toBe(withToken.callerKey);
    expect(callerIdentity({ 'x-nomad-token': 'other' }, '10.1.2.3').callerKey).not.toBe(withToken.callerKey);
    expect(callerIdentity({ 'x-nomad-token-east': 's3cret-token' }, '10.1.2.3').callerKey).not.toBe(
      withToken.callerKey,
    );
    expect(callerIdentity({ 'x-nomad-token': '  ' }, '10.1.2.3').callerKey).toBe('addr:10.1.2.3');
    // IPv6 hosts own a /64.
    expect(callerIdentity({}, '2001:db8:1:2:aaaa::1').callerKey).toBe('addr:2001:db8:1:2::/64');
    expect(callerIdentity({}, '2001:db8:1:2::ffff').callerKey).toBe('addr:2001:db8:1:2::/64');
  });

  it('should keep at most maxTracked keys and drop refilled idle ones', () => {
    let now = 0;
    const tier = { requestsPerSecond: 10, burst: 10, maxInFlight: 5 };
    const limiter = new CallerLimiter({
      caller: tier,
      address: { requestsPerSecond: 0, burst: 1, maxInFlight: 0 },
      maxTracked: 100,
      now: () => now,
    });
    for (let i = 0; i < 1000; i++) {
      const a = limiter.admit({ callerKey: `cred:${i}`, addressKey: `addr:${i % 7}` });
      expect(a.ok).toBe(true);
      if (a.ok) a.release();
    }
    expect(limiter.size).toBeLessThanOrEqual(100);
    now += 60_000;
    limiter.admit({ callerKey: 'cred:x', addressKey: 'addr:x' });
    expect(limiter.size).toBe(2);
  });

  it('should refuse a bad limit setting naming it', () => {
    expect(() => loadHttpEdgeConfig({ RATE_LIMIT_CALLER_RPS: '-1' }, {})).toThrow(
      new ConfigError('RATE_LIMIT_CALLER_RPS', 'must be a number from 0 to 1000000 (got "-1")'),
    );
    expect(() => loadHttpEdgeConfig({}, { http: { rateLimit: { address: { maxInFlight: 1.5 } } } })).toThrow(
      /http\.rateLimit\.address\.maxInFlight: must be a whole number/,
    );
    expect(
      loadHttpEdgeConfig(
        { RATE_LIMIT_CALLER_BURST: '50' },
        { http: { rateLimit: { caller: { burst: 10, maxInFlight: 3 } } } },
      ).rateLimit.caller,
    ).toEqual({ requestsPerSecond: 200, burst: 50, maxInFlight: 3 });
  });
});
