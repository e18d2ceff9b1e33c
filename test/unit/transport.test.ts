/**
 * The transport against a real local node:http server (no mocks): deadlines that fire whatever
 * undici does, header values checked before anything is sent, a wedged pool replaced, calls not
 * sent after their caller left, and the caller's abort reason kept.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BadUserInputError, ErrorCode, GatewayError, OperationTimeoutError } from '../../adapters/contract/errors';
import { PoolKeeper, type CallState } from '../../adapters/http/pool';
import { Transport } from '../../adapters/http/transport';
import type { CallRecord } from '../../adapters/contract/module';

interface TestServer {
  url: string;
  server: Server;
  connections: () => number;
  requests: () => number;
  /** Requests are held unanswered while true. */
  hang: { on: boolean };
  /** Answers the held requests now. */
  release(): void;
  close(): Promise<void>;
}

async function startServer(): Promise<TestServer> {
  let connections = 0;
  let requests = 0;
  const hang = { on: false };
  const held: ServerResponse[] = [];
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (hang.on) return void held.push(res);
    res.end('ok');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    connections: () => connections,
    requests: () => requests,
    hang,
    release: () => held.splice(0).forEach((r) => r.end('late')),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const get = { method: 'GET' as const, path: '/x', endpoint: 'GET /x' };

describe('Transport', () => {
  let srv: TestServer;
  const transports: Transport[] = [];
  const make = (o: Partial<ConstructorParameters<typeof Transport>[0]> = {}): Transport => {
    const t = new Transport({ backend: 'b', baseUrl: srv.url, timeoutMs: 2_000, maxConnections: 2, ...o });
    transports.push(t);
    return t;
  };

  beforeEach(async () => {
    srv = await startServer();
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await srv.close();
  });

  it.each([
    ['an emoji', 'k=💥'],
    ['a newline', 'k=a\nb'],
    ['a carriage return', 'k=a\rb'],
    ['a tab', 'k=a\tb'],
    ['a NUL', 'k=a\u0000b'],
    ['a C1 control', 'k=a\u0085b'],
  ])(
    'should refuse a header value with %s as BAD_USER_INPUT naming the header, more times than the pool has slots, and keep serving',
    async (_what, value) => {
      const t = make();
      for (let i = 0; i < 10; i++) {
        const err = await t.send({ ...get, headers: { 'x-nomad-csi-secrets': value } }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BadUserInputError);
        expect((err as GatewayError).code).toBe(ErrorCode.BadUserInput);
        expect((err as GatewayError).retryable).toBe(false);
        expect((err as Error).message).toContain('x-nomad-csi-secrets');
        expect((err as Error).message).not.toContain(value.slice(2));
      }
      expect(srv.connections()).toBe(0);
      const res = await t.send(get);
      expect(res.status).toBe(200);
      expect(res.text).toBe('ok');
    },
  );

  it('should accept printable Latin-1 beyond ASCII in a header value', async () => {
    const res = await make().send({ ...get, headers: { 'x-token': 'café ÿ ~' } });
    expect(res.status).toBe(200);
  });

  it('should settle with BACKEND_TIMEOUT when the server never answers, and serve the next call', async () => {
    const records: CallRecord[] = [];
    const t = make({ timeoutMs: 300, onCall: (r) => records.push(r) });
    srv.hang.on = true;
    const err = await t.send(get).catch((e: unknown) => e);
    expect((err as GatewayError).code).toBe(ErrorCode.BackendTimeout);
    srv.hang.on = false;
    expect((await t.send(get)).status).toBe(200);
    expect(records.map((r) => [r.status, r.failure])).toEqual([
      [0, 'BACKEND_TIMEOUT'],
      [200, undefined],
    ]);
  });

  it('should survive requests undici refuses (its slot leak) with a typed error, more times than the pool has slots', async () => {
    const t = make({ timeoutMs: 1_000 });
    for (let i = 0; i < 6; i++) {
      // A body undici cannot send: it refuses the request and, inside a pool, keeps the slot.
      const err = await t
        .send({ method: 'POST', path: '/x', endpoint: 'POST /x', body: 42 as unknown as string })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe(ErrorCode.Internal);
    }
    expect((await t.send(get)).status).toBe(200);
  });

  it('should send nothing, and open no connection, for a call whose caller has already gone', async () => {
    const t = make();
    const gone = new AbortController();
    gone.abort();
    for (let i = 0; i < 5; i++)
      await expect(t.send({ ...get, signal: gone.signal })).rejects.toMatchObject({
        code: ErrorCode.BackendUnavailable,
        retryable: false,
      });
    await new Promise((r) => setTimeout(r, 100));
    expect(srv.connections()).toBe(0);
    expect(srv.requests()).toBe(0);
  });

  it.each(['finish', 'abort'] as const)(
    "should fail with the caller's abort reason when it is a gateway error (inFlightOnAbort %s)",
    async (mode) => {
      const t = make({ inFlightOnAbort: mode });
      srv.hang.on = true;
      const op = new AbortController();
      const call = t.send({ ...get, signal: op.signal });
      await new Promise((r) => setTimeout(r, 100));
      op.abort(new OperationTimeoutError(50));
      const err = await call.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OperationTimeoutError);
      expect((err as GatewayError).code).toBe(ErrorCode.OperationTimeout);
    },
  );

  it.each([
    ['finish', 1, 200],
    ['abort', 2, 0],
  ] as const)(
    'with inFlightOnAbort %s, a call on the wire when its caller leaves should end so that %i connection(s) serve the next call',
    async (mode, connections, status) => {
      const records: CallRecord[] = [];
      const t = make({ inFlightOnAbort: mode, onCall: (r) => records.push(r) });
      expect((await t.send(get)).status).toBe(200);
      // undici hands a finished connection back a moment after the answer.
      const settle = (): Promise<unknown> => new Promise((r) => setTimeout(r, 100));
      await settle();
      srv.hang.on = true;
      const caller = new AbortController();
      const call = t.send({ ...get, signal: caller.signal });
      await new Promise((r) => setTimeout(r, 100));
      caller.abort();
      // The caller is answered at once either way.
      await expect(call).rejects.toMatchObject({ code: ErrorCode.BackendUnavailable, retryable: false });
      srv.hang.on = false;
      srv.release();
      for (let i = 0; i < 50 && records.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      // The record says what the exchange really got: the late answer, or none (connection cut).
      expect(records[1]?.status).toBe(status);
      await settle();
      expect((await t.send(get)).status).toBe(200);
      expect(srv.connections()).toBe(connections);
    },
  );

  it('should never send the calls still waiting for a connection when their caller leaves (finish)', async () => {
    const t = make({ maxConnections: 2 });
    srv.hang.on = true;
    const caller = new AbortController();
    const calls = Array.from({ length: 10 }, () => t.send({ ...get, signal: caller.signal }).catch((e: unknown) => e));
    for (let i = 0; i < 50 && srv.requests() < 2; i++) await new Promise((r) => setTimeout(r, 10));
    caller.abort();
    for (const err of await Promise.all(calls)) expect((err as GatewayError).code).toBe(ErrorCode.BackendUnavailable);
    srv.hang.on = false;
    srv.release();
    await new Promise((r) => setTimeout(r, 200));
    // The two on the wire finished; the eight waiting were dropped, not sent later.
    expect(srv.requests()).toBe(2);
    expect(srv.connections()).toBe(2);
  });

  it('should close within a bound even with a call stuck on the wire', async () => {
    const t = make({ timeoutMs: 60_000 });
    srv.hang.on = true;
    const stuck = t.send(get).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await t.close();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await stuck).toBeInstanceOf(GatewayError);
  });
});

describe('PoolKeeper', () => {
  it('should replace a pool whose slots undici leaked once a queued call passes its deadline', async () => {
    const srv = await startServer();
    const keeper = new PoolKeeper(srv.url, 2, 1_000);
    try {
      // Leak both slots the way undici 7 does: requests it refuses while building them.
      for (let i = 0; i < 2; i++)
        await expect(
          keeper.request({ method: 'GET', path: '/', headers: { x: '\n' } }, { settled: false }),
        ).rejects.toMatchObject({ code: 'UND_ERR_INVALID_ARG' });
      // The next request queues for ever, and aborting it does not settle it.
      const deadline = new AbortController();
      const state: CallState = { settled: false };
      const queued = keeper
        .request({ method: 'GET', path: '/', signal: deadline.signal }, state)
        .catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      deadline.abort();
      await new Promise((r) => setTimeout(r, 100));
      expect(state.settled).toBe(false);
      keeper.afterDeadline(state);
      await new Promise((r) => setTimeout(r, 200));
      expect(keeper.replacements).toBe(1);
      const res = await keeper.request({ method: 'GET', path: '/' }, { settled: false });
      expect(await res.body.text()).toBe('ok');
      void queued;
    } finally {
      await keeper.close();
      await srv.close();
    }
  });
});
