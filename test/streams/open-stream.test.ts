/**
 * A stream's queue bound (server/streams/open-stream.ts) on a real node:http response to a client
 * that stops reading: past `maxBufferedBytes` queued the response is cut, once, and nothing more is
 * written; a reading client is never cut.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { OpenStream } from '../../server/streams/open-stream';
import { SSE } from '../../server/streams/sse';
import { until } from '../support/until';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server whose one response writes a 64 KiB event every 5 ms through an OpenStream bounded at 256 KiB. */
async function serve(): Promise<{ port: number; cuts: number[]; stream: () => OpenStream | undefined }> {
  const cuts: number[] = [];
  let stream: OpenStream | undefined;
  server = createServer((_req, res) => {
    stream = new OpenStream(res, SSE, 256 * 1024, (queued) => cuts.push(queued));
    stream.open();
    const chunk = SSE.next(JSON.stringify({ data: { x: 'y'.repeat(64 * 1024) } }));
    const t = setInterval(() => (stream!.ended ? clearInterval(t) : stream!.write(chunk)), 5);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, cuts, stream: () => stream };
}

describe('a stream that is not read', () => {
  it('should be cut once its queue passes the bound, and a reading client is not', async () => {
    const { port, cuts, stream } = await serve();
    const stalled = connect(port, '127.0.0.1');
    stalled.write('GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    stalled.pause();
    await until(() => cuts.length > 0, 'the stalled response to be cut', 20_000);
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toBeGreaterThan(256 * 1024);
    expect(stream()!.ended).toBe(true);
    expect(stream()!.res.destroyed).toBe(true);
    stalled.destroy();

    // A client that reads everything gets 4 MiB and more without being cut.
    const reader = connect(port, '127.0.0.1');
    let got = 0;
    reader.on('data', (d: Buffer) => (got += d.length));
    reader.write('GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    await until(() => got > 4 * 1_048_576, 'the reading client to get 4 MiB', 20_000);
    expect(cuts).toHaveLength(1);
    expect(stream()!.ended).toBe(false);
    reader.destroy();
  });
});

describe('a burst larger than the bound, to a client that reads', () => {
  it('should not be cut: the queue is judged at the end of the turn, once Node has written what the client takes', async () => {
    const cuts: number[] = [];
    let stream: OpenStream | undefined;
    server = createServer((_req, res) => {
      stream = new OpenStream(res, SSE, 256 * 1024, (queued) => cuts.push(queued));
      stream.open();
      // Eight 64 KiB events in one turn: 512 KiB queued before the socket is uncorked.
      const chunk = SSE.next(JSON.stringify({ data: { x: 'y'.repeat(64 * 1024) } }));
      setTimeout(() => {
        for (let i = 0; i < 8; i++) stream!.write(chunk);
      }, 50);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const reader = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let got = 0;
    reader.on('data', (d: Buffer) => (got += d.length));
    reader.write('GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    await until(() => got > 8 * 64 * 1024, 'the reading client to get the whole burst', 20_000);
    expect(cuts).toEqual([]);
    expect(stream!.ended).toBe(false);
    reader.destroy();
  });
});
