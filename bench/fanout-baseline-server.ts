/**
 * The fan-out benchmark's syscall-only baseline (a child process of bench/fanout.ts): a plain `ws`
 * server, no gateway code, speaking just enough graphql-transport-ws for the load generator
 * (bench/fanout-clients.ts): `connection_ack`, then one `next` per `subscribe` (the client counts
 * the subscription live on its first `next`, as it does with the gateway's SUBSCRIBED). An event
 * is written as the gateway writes a shared result: the `next` frame of each distinct subscription
 * id built once, then one `ws.send` per socket in one synchronous loop. What the gateway costs on
 * top of this, on the same clients and machine, is its own work; this server's figures are the
 * floor of the sockets, the `ws` library and the system calls.
 *
 * BASELINE_WRITERS=n (default 1) spreads the sockets over n processes (node:cluster shares the
 * port), each writing its own in parallel: what owning sockets in several threads or processes
 * could buy on this machine, whose cores the receivers share.
 *
 *   POST /event  (on the control URL) { "payload": "<JSON text of the next message's payload>" }
 *     → { "sockets": n, "loopMs": ms }   (the write loops' durations summed, measured in the writers)
 *   Every OBSERVED_AT in the payload becomes the time the fan-out starts (an ISO string, as the
 *   gateway's `observedAt`), so the client measures both servers from the same kind of instant.
 *
 * Prints `BASELINE_URL=ws://127.0.0.1:<port> CONTROL=http://127.0.0.1:<port> PIDS=<pid,…>` once listening.
 */
import cluster from 'node:cluster';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { OBSERVED_AT } from './fanout-baseline';
import { messageText } from '../server/ws/message-text';

/** A subscribed socket and the id it subscribed with. */
interface Subscriber {
  ws: WebSocket;
  id: string;
}

const subscribers = new Set<Subscriber>();

/** What a subscription first receives: the gateway sends SUBSCRIBED; the client only checks the type. */
const SUBSCRIBED =
  '{"data":{"volumeChanged":{"type":"SUBSCRIBED","cursor":"","observedAt":"","volumeId":"","attachment":null}}}';

/** The gateway's `next` frame bytes (server/ws/shared-bytes.ts: `{"id":…,"type":"next","payload":…}`). */
const nextFrame = (id: string, payload: string): Buffer =>
  Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`, 'utf8');

/** Writes `payload` to every subscriber; answers the loop's duration. */
function fanOut(template: string): { sockets: number; loopMs: number } {
  const payload = template.replaceAll(OBSERVED_AT, new Date().toISOString());
  const frames = new Map<string, Buffer>();
  const t0 = performance.now();
  let sockets = 0;
  for (const s of subscribers) {
    if (s.ws.readyState !== WebSocket.OPEN) continue;
    let f = frames.get(s.id);
    if (!f) frames.set(s.id, (f = nextFrame(s.id, payload)));
    s.ws.send(f, { binary: false });
    sockets++;
  }
  return { sockets, loopMs: performance.now() - t0 };
}

/** Answers POST /event with `fanOut`'s figures. */
function control(
  fan: (payload: string) => Promise<{ sockets: number; loopMs: number }> | { sockets: number; loopMs: number },
): Server {
  return createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/event') return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { payload } = JSON.parse(Buffer.concat(chunks).toString()) as { payload: string };
      void Promise.resolve(fan(payload)).then((r) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r)),
      );
    });
  });
}

/** The graphql-ws side: serves subscribers on `server`. */
function serveSockets(server: Server): void {
  const wss = new WebSocketServer({
    server,
    perMessageDeflate: false,
    clientTracking: false,
    handleProtocols: (p) => (p.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
  });
  wss.on('connection', (ws) => {
    const mine: Subscriber[] = [];
    ws.on('message', (raw: WebSocket.RawData) => {
      const m = JSON.parse(messageText(raw)) as { type: string; id?: string };
      if (m.type === 'connection_init') ws.send('{"type":"connection_ack"}');
      else if (m.type === 'subscribe' && m.id !== undefined) {
        const s = { ws, id: m.id };
        mine.push(s);
        subscribers.add(s);
        ws.send(nextFrame(m.id, SUBSCRIBED), { binary: false });
      }
    });
    ws.on('close', () => {
      for (const s of mine) subscribers.delete(s);
    });
    ws.on('error', () => ws.terminate());
  });
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

async function main(): Promise<void> {
  const writers = Number(process.env.BASELINE_WRITERS ?? 1);
  if (cluster.isWorker) {
    // One writer of several: the primary relays events and sums the figures.
    const server = createServer();
    serveSockets(server);
    const port = await listen(server);
    process.on('message', (m: { payload: string }) => process.send!(fanOut(m.payload)));
    process.send!({ port });
    return;
  }
  if (writers <= 1) {
    const server = control(fanOut);
    serveSockets(server);
    const port = await listen(server);
    console.log(`BASELINE_URL=ws://127.0.0.1:${port} CONTROL=http://127.0.0.1:${port} PIDS=${process.pid}`);
    // An exit, not the signal's default, so that --cpu-prof writes its profile.
    process.on('SIGTERM', () => process.exit(0));
    return;
  }
  const workers = Array.from({ length: writers }, () => cluster.fork());
  const ports = await Promise.all(
    workers.map((w) => new Promise<number>((r) => w.once('message', (m: { port: number }) => r(m.port)))),
  );
  const fan = async (payload: string): Promise<{ sockets: number; loopMs: number }> => {
    const answers = await Promise.all(
      workers.map(
        (w) => new Promise<{ sockets: number; loopMs: number }>((r) => (w.once('message', r), w.send({ payload }))),
      ),
    );
    return { sockets: answers.reduce((s, a) => s + a.sockets, 0), loopMs: answers.reduce((s, a) => s + a.loopMs, 0) };
  };
  const cport = await listen(control(fan));
  console.log(
    `BASELINE_URL=ws://127.0.0.1:${ports[0]} CONTROL=http://127.0.0.1:${cport} PIDS=${[process.pid, ...workers.map((w) => w.process.pid)].join(',')}`,
  );
  process.on('SIGTERM', () => {
    for (const w of workers) w.kill('SIGTERM');
    process.exit(0);
  });
}

void main();
if (cluster.isWorker) process.on('SIGTERM', () => process.exit(0));
