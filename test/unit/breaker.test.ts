/**
 * The circuit breaker's state machine (a fake clock), and what the transport tells it about real
 * HTTP exchanges with a local node:http server: 5xx, timeouts and refused connections count; 4xx
 * answers never do; calls the caller abandoned count as neither.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BREAKER_DEFAULTS, Breaker, BreakerOpenError, type BreakerOptions } from '../../adapters/contract/breaker';
import { Transport } from '../../adapters/http/transport';

function clocked(o: Partial<BreakerOptions> = {}): { b: Breaker; tick: (ms: number) => void } {
  let now = 1_000_000;
  const b = new Breaker('east', 'nomad', { ...BREAKER_DEFAULTS, ...o }, () => now);
  return { b, tick: (ms) => void (now += ms) };
}

/** Admits and records one call. */
const call = (b: Breaker, outcome: 'success' | 'failure' | 'neutral'): void => b.record(outcome, b.admit());

describe('Breaker', () => {
  it('should open after 5 failures in a row, not after 4 and a success', () => {
    const { b } = clocked();
    for (let i = 0; i < 4; i++) call(b, 'failure');
    call(b, 'success');
    for (let i = 0; i < 4; i++) call(b, 'failure');
    expect(b.state).toBe('CLOSED');
    call(b, 'failure');
    expect(b.status()).toMatchObject({
      state: 'OPEN',
      reason: '5 failures in a row',
      backend: 'east',
      service: 'nomad',
    });
  });

  it('should open when half of at least 10 calls in the window failed, and forget calls older than the window', () => {
    const { b } = clocked();
    // 4 failures, 5 successes, interleaved: never 5 in a row, 9 calls.
    for (let i = 0; i < 4; i++) {
      call(b, 'failure');
      call(b, 'success');
    }
    call(b, 'success');
    expect(b.state).toBe('CLOSED');
    call(b, 'failure'); // 5 of 10
    expect(b.status()).toMatchObject({ state: 'OPEN', reason: '5 of 10 calls failed in 30 s' });

    const old = clocked();
    for (let i = 0; i < 4; i++) {
      call(old.b, 'failure');
      call(old.b, 'success');
    }
    old.tick(31_000); // those 8 left the window
    call(old.b, 'success');
    call(old.b, 'failure');
    expect(old.b.state).toBe('CLOSED');
  });

  it('should refuse callers at once while open and half-open; only the probe, once the open time is past, decides', () => {
    const { b, tick } = clocked();
    for (let i = 0; i < 5; i++) call(b, 'failure');
    let refused: unknown;
    try {
      b.admit();
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(BreakerOpenError);
    expect((refused as BreakerOpenError).toExtensions()).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      retryable: true,
      backend: 'east',
      service: 'nomad',
      breaker: 'OPEN',
      retryAfterSeconds: 5,
    });
    expect((refused as Error).message).toMatch(
      /backend "east" \(nomad\) is unavailable: its circuit breaker is open \(5 failures in a row\); it will be tried again in 5 s/,
    );
    // A probe before the open time is up is refused too.
    expect(() => b.admit(true)).toThrow(BreakerOpenError);

    tick(5_000);
    // Past the open time, a caller is still refused: it never becomes the probe.
    expect(() => b.admit()).toThrow(BreakerOpenError);
    expect(b.state).toBe('OPEN');
    expect(b.admit(true)).toBe(true); // the probe
    expect(b.state).toBe('HALF_OPEN');
    expect(() => b.admit(true)).toThrow(BreakerOpenError); // only one
    expect(() => b.admit()).toThrow(BreakerOpenError);
    b.record('failure', true);
    // Open again, and the next probe may go at once: no doubling of a failed probe.
    expect(b.status()).toMatchObject({ state: 'OPEN', reason: 'the probe failed' });
    b.record('success', b.admit(true));
    expect(b.state).toBe('CLOSED');
    call(b, 'success');
  });

  it('should tell refused callers when the next probe comes, from the probe interval', () => {
    const { b, tick } = clocked();
    b.probeIntervalMs = 2_000;
    b.admit(true); // a probe while closed: the schedule's phase
    for (let i = 0; i < 5; i++) call(b, 'failure');
    tick(500);
    // Open until +5 s from the trip, when the prober wakes for it.
    expect(() => b.admit()).toThrow(expect.objectContaining({ retryAfterSeconds: 5 }));
    tick(5_500);
    b.record('failure', b.admit(true));
    tick(500);
    // Then the next probe, one interval after the failed one.
    expect(() => b.admit()).toThrow(expect.objectContaining({ retryAfterSeconds: 2 }));
  });

  it('should double the open time when it opens again soon after closing (flapping), up to its maximum, and start over after a quiet window', () => {
    const { b, tick } = clocked({ openMs: 5_000, maxOpenMs: 12_000 });
    const trip = (): void => {
      for (let i = 0; i < 5; i++) call(b, 'failure');
    };
    trip();
    for (const ms of [5_000, 10_000, 12_000, 12_000]) {
      tick(ms - 1);
      expect(() => b.admit(true)).toThrow(BreakerOpenError);
      tick(1);
      b.record('success', b.admit(true)); // the probe closes it…
      tick(1_000);
      trip(); // …and it opens again a second later
    }
    tick(12_000);
    b.record('success', b.admit(true));
    tick(31_000); // closed for longer than the window
    trip();
    tick(5_000);
    expect(b.admit(true)).toBe(true);
  });

  it('should leave it open when the probe was abandoned (neutral), for the next probe', () => {
    const { b, tick } = clocked();
    for (let i = 0; i < 5; i++) call(b, 'failure');
    tick(5_000);
    b.record('neutral', b.admit(true));
    expect(b.state).toBe('OPEN');
    b.record('success', b.admit(true));
    expect(b.state).toBe('CLOSED');
  });

  it('should not let a call admitted before it opened decide for the probe', () => {
    const { b, tick } = clocked();
    const early = b.admit(); // in flight while the others fail
    for (let i = 0; i < 5; i++) call(b, 'failure');
    tick(5_000);
    const probe = b.admit(true);
    b.record('success', early);
    expect(b.state).toBe('HALF_OPEN');
    b.record('failure', probe);
    expect(b.state).toBe('OPEN');
  });

  it('should tell listeners of every change', () => {
    const { b, tick } = clocked();
    const seen: string[] = [];
    b.onChange((s) => seen.push(s.state));
    for (let i = 0; i < 5; i++) call(b, 'failure');
    tick(5_000);
    b.record('failure', b.admit(true));
    b.record('success', b.admit(true));
    expect(seen).toEqual(['OPEN', 'HALF_OPEN', 'OPEN', 'HALF_OPEN', 'CLOSED']);
  });
});

describe('the transport and its breaker', () => {
  let server: Server;
  let url: string;
  let status = 200;
  let requests = 0;
  let hang = false;
  const transports: Transport[] = [];

  beforeAll(async () => {
    server = createServer((_req, res) => {
      requests++;
      if (hang) return;
      res.statusCode = status;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    hang = false;
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const make = (timeoutMs = 2_000, o: Partial<BreakerOptions> = {}): { t: Transport; b: Breaker } => {
    const b = new Breaker('b', 'nomad', { ...BREAKER_DEFAULTS, ...o });
    const t = new Transport({ backend: 'b', baseUrl: url, timeoutMs, readRetries: 0, breaker: b });
    transports.push(t);
    return { t, b };
  };
  const get = { method: 'GET' as const, path: '/x', endpoint: 'GET /x' };

  it('should never open on 4xx answers (bad tokens, not found)', async () => {
    const { t, b } = make();
    for (const s of [401, 403, 404, 400, 409, 429]) {
      status = s;
      for (let i = 0; i < 3; i++) expect((await t.send(get)).status).toBe(s);
    }
    expect(b.state).toBe('CLOSED');
  });

  it('should open on 5xx answers and then refuse without sending', async () => {
    const { t, b } = make();
    status = 503;
    for (let i = 0; i < 5; i++) expect((await t.send(get)).status).toBe(503);
    expect(b.state).toBe('OPEN');
    const before = requests;
    await expect(t.send(get)).rejects.toBeInstanceOf(BreakerOpenError);
    expect(requests).toBe(before);
    status = 200;
  });

  it('should count timeouts and refused connections', async () => {
    const slow = make(200);
    hang = true;
    for (let i = 0; i < 5; i++) await expect(slow.t.send(get)).rejects.toMatchObject({ code: 'BACKEND_TIMEOUT' });
    expect(slow.b.state).toBe('OPEN');
    hang = false;

    const b = new Breaker('b', 'nomad');
    const closed = new Transport({
      backend: 'b',
      baseUrl: 'http://127.0.0.1:1',
      timeoutMs: 2_000,
      readRetries: 0,
      breaker: b,
    });
    transports.push(closed);
    for (let i = 0; i < 5; i++) await expect(closed.send(get)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(b.state).toBe('OPEN');
  });

  it('should give the probe its own deadline, let it alone through an open breaker, and close on its answer', async () => {
    const { t, b } = make(5_000, { openMs: 300 });
    hang = true;
    const started = performance.now();
    // The probe's deadline (300 ms), not the call deadline (5 s): a probe to a hung host fails fast.
    await expect(t.send({ ...get, probe: { timeoutMs: 300 } })).rejects.toMatchObject({
      code: 'BACKEND_TIMEOUT',
      message: expect.stringMatching(/within 300 ms/),
    });
    expect(performance.now() - started).toBeLessThan(2_500);
    for (let i = 0; i < 4; i++)
      await expect(t.send({ ...get, probe: { timeoutMs: 300 } })).rejects.toMatchObject({ code: 'BACKEND_TIMEOUT' });
    expect(b.state).toBe('OPEN');
    hang = false;
    const sent = requests;
    await expect(t.send(get)).rejects.toBeInstanceOf(BreakerOpenError);
    expect(requests).toBe(sent);
    // Past the open time only the probe goes through, and its answer closes it.
    await new Promise((r) => setTimeout(r, 300));
    await expect(t.send(get)).rejects.toBeInstanceOf(BreakerOpenError);
    expect((await t.send({ ...get, probe: { timeoutMs: 300 } })).status).toBe(200);
    expect(b.state).toBe('CLOSED');
    expect((await t.send(get)).status).toBe(200);
  });

  it('should not count calls their caller abandoned', async () => {
    const { t, b } = make(5_000);
    hang = true;
    for (let i = 0; i < 6; i++) {
      const ac = new AbortController();
      const p = t.send({ ...get, signal: ac.signal });
      ac.abort();
      await expect(p).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    }
    expect(b.state).toBe('CLOSED');
  });
});
