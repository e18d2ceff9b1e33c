/**
 * Streams through the socket: shared bytes written as the hub serialized them, errors formatted
 * as HTTP formats them, iterators closed on complete, error and abrupt TCP close, and a slow
 * consumer closed (4413) without stalling another socket.
 */
import { SerializedResult } from '../../subscriptions/live/types';
import { GatewayError, ErrorCode } from '../../adapters/errors';
import { ackedClient, OP_SUB, startWsGateway, stopAll, waitFor } from './helpers';

afterEach(stopAll);

const subscribe = (c: { send(m: unknown): void }, id: string, variables: Record<string, unknown> = { id }): void => c.send({ id, type: 'subscribe', payload: { query: OP_SUB, variables } });

describe('live streams over graphql-ws', () => {
  it('should execute an event once for two subscribers and write the hub\'s bytes unchanged', async () => {
    const gw = await startWsGateway();
    const a = await ackedClient(gw.wsUrl);
    const b = await ackedClient(gw.wsUrl);
    subscribe(a, 'a1', { id: 'op' });
    subscribe(b, 'b"1', { id: 'op' });
    await waitFor(() => gw.hub.open === 2, 'two streams');
    expect(await gw.hub.publish('operationUpdated', { state: 'RUNNING', backendStatus: 'attaching' })).toBe(2);
    const expected = { data: { operationUpdated: { state: 'RUNNING', backendStatus: 'attaching' } } };
    expect(await a.next()).toEqual({ id: 'a1', type: 'next', payload: expected });
    expect(await b.next()).toEqual({ id: 'b"1', type: 'next', payload: expected });
    // Bytes JSON.stringify would never write (spaces, key order) arrive exactly as the hub made them.
    const odd = '{ "data" :{"operationUpdated":{"backendStatus":null,  "state":"SUCCEEDED"}}}';
    gw.hub.publishRaw('operationUpdated', new SerializedResult(odd));
    expect(await a.nextRaw()).toBe(`{"id":"a1","type":"next","payload":${odd}}`);
    expect(await b.nextRaw()).toBe(`{"id":"b\\"1","type":"next","payload":${odd}}`);
  });

  it('should format a result\'s errors as HTTP does (typed codes kept, internals masked)', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 's');
    await waitFor(() => gw.hub.open === 1, 'the stream');
    const { GraphQLError } = await import('graphql');
    gw.hub.publishRaw('operationUpdated', { data: null, errors: [new GraphQLError('gone', { originalError: new GatewayError(ErrorCode.NotFound, 'no such operation') }), new GraphQLError('boom', { originalError: new Error('secret /etc/path') })] });
    const m = await c.next();
    expect(m.payload.errors[0]).toMatchObject({ message: 'no such operation', extensions: { code: 'NOT_FOUND' } });
    expect(m.payload.errors[1]).toEqual({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('should answer a subscription the hub cannot start (CURSOR_EXPIRED) with its errors, then complete', async () => {
    const gw = await startWsGateway();
    const { GraphQLError } = await import('graphql');
    gw.hub.startResult = { errors: [new GraphQLError('expired', { originalError: new GatewayError(ErrorCode.CursorExpired, 'cursor expired: list again') })] };
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 's');
    expect(await c.next()).toMatchObject({ id: 's', type: 'next', payload: { errors: [{ extensions: { code: 'CURSOR_EXPIRED' } }] } });
    expect(await c.next()).toEqual({ id: 's', type: 'complete' });
    // Its place is free again.
    gw.hub.startResult = undefined;
    subscribe(c, 's');
    await waitFor(() => gw.hub.open === 1, 'the same id again');
  });

  it('should close the hub\'s stream when the client completes', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 's');
    await waitFor(() => gw.hub.counts().operationUpdated === 1, 'the stream');
    c.send({ id: 's', type: 'complete' });
    await waitFor(() => gw.hub.open === 0, 'the stream to be returned');
  });

  it('should send an error and close the stream when it fails', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 's');
    await waitFor(() => gw.hub.open === 1, 'the stream');
    gw.hub.fail('operationUpdated', new GatewayError(ErrorCode.Unauthenticated, 'token expired: authenticate again and resume from your cursor'));
    const m = await c.next();
    expect(m).toMatchObject({ id: 's', type: 'error' });
    expect(m.payload[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(gw.hub.open).toBe(0);
    c.send({ type: 'ping' });
    expect(await c.next()).toEqual({ type: 'pong' });
  });

  it('should close every stream of a socket whose TCP connection drops', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 'a');
    subscribe(c, 'b');
    await waitFor(() => gw.hub.open === 2, 'two streams');
    (c.ws as unknown as { _socket: import('node:net').Socket })._socket.destroy();
    await waitFor(() => gw.hub.open === 0, 'both streams to be returned');
    await waitFor(async () => /gateway_ws_connections 0/.test(await gw.metrics()), 'the socket to be gone');
  });

  it('should close a slow consumer with 4413 while another socket keeps receiving', async () => {
    const gw = await startWsGateway({ ws: { maxBufferedBytes: 64 * 1024 } });
    const slow = await ackedClient(gw.wsUrl);
    const fast = await ackedClient(gw.wsUrl);
    subscribe(slow, 's');
    subscribe(fast, 'f');
    await waitFor(() => gw.hub.open === 2, 'two streams');
    // Stop reading: the kernel buffers fill, then the gateway's queue for this socket grows.
    (slow.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
    const big = new SerializedResult(JSON.stringify({ data: { operationUpdated: { state: 'RUNNING', backendStatus: 'x'.repeat(256 * 1024) } } }));
    let received = 0;
    let sent = 0;
    // Until the gateway gives up on the slow socket (it then drops what would go to it).
    const droppedYet = async (): Promise<boolean> => /gateway_ws_messages_dropped_total [1-9]/.test(await gw.metrics());
    for (let i = 0; i < 1000 && !(i % 10 === 9 && (await droppedYet())); i++) {
      sent += gw.hub.publishRaw('operationUpdated', big) > 0 ? 1 : 0;
      // The fast reader keeps up: it gets every event while the slow one is stuck.
      await fast.nextRaw();
      received++;
    }
    expect(await droppedYet()).toBe(true);
    expect(received).toBe(sent);
    // The slow socket is cut (it cannot even read the close frame) and its stream closed.
    await waitFor(() => gw.hub.open === 1, 'the slow socket\'s stream to be closed');
    expect(await gw.metrics()).toMatch(/gateway_ws_closes_total\{code="4413"\} 1/);
    // The fast socket is unaffected.
    gw.hub.publishRaw('operationUpdated', new SerializedResult('{"data":{"operationUpdated":{"state":"SUCCEEDED","backendStatus":null}}}'));
    expect((await fast.next()).payload.data.operationUpdated.state).toBe('SUCCEEDED');
    (slow.ws as unknown as { _socket: import('node:net').Socket })._socket.resume();
    // It reads what was queued, then the close frame if it made it before the cut (else 1006).
    expect([4413, 1006]).toContain((await slow.closed).code);
  });

  it('should close the socket with 4413 when the hub drops a slow consumer', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    subscribe(c, 's');
    await waitFor(() => gw.hub.open === 1, 'the stream');
    gw.hub.fail('operationUpdated', Object.assign(new Error('subscriber too slow'), { code: 'SLOW_CONSUMER' }));
    const closed = await c.closed;
    expect(closed).toEqual({ code: 4413, reason: 'Slow consumer: the live hub dropped this subscriber' });
  });

  it('should be retried by graphql-ws\'s own client after a 4413 close (not one of its fatal codes)', async () => {
    const { createClient } = await import('graphql-ws');
    const WebSocket = (await import('ws')).default;
    const gw = await startWsGateway();
    let connected = 0;
    const client = createClient({ url: gw.wsUrl, webSocketImpl: WebSocket, retryAttempts: 3, retryWait: async () => undefined, lazy: true, on: { connected: () => void connected++ } });
    try {
      const events: unknown[] = [];
      const errors: unknown[] = [];
      client.subscribe({ query: OP_SUB, variables: { id: 'x' } }, { next: (v) => void events.push(v), error: (e) => void errors.push(e), complete: () => undefined });
      await waitFor(() => gw.hub.open === 1, 'the first subscription');
      gw.hub.fail('operationUpdated', Object.assign(new Error('too slow'), { code: 'SLOW_CONSUMER' }));
      // The client reconnects and subscribes again by itself.
      await waitFor(() => connected === 2 && gw.hub.open === 1, 'the client to reconnect and resubscribe');
      gw.hub.publishRaw('operationUpdated', new SerializedResult('{"data":{"operationUpdated":{"state":"SUCCEEDED","backendStatus":null}}}'));
      await waitFor(() => events.length === 1, 'the event after reconnecting');
      expect(errors).toEqual([]);
    } finally {
      await client.dispose();
    }
  });
});
