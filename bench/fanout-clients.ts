/**
 * The fan-out benchmark's load generator (a child process of bench/fanout.ts): opens N graphql-ws
 * connections with the raw `ws` client (lighter than a full client, so the generator measures the
 * gateway and not itself), spread over several loopback source addresses (each has its own
 * ephemeral-port range), subscribes each to `volumeChanged`, and records when every `next` arrives.
 *
 * Parent → child (IPC): `{ open: { url, count, sources, init, batch, query, tag } }`, `{ report: true }`,
 * `{ count: true }`, `{ close: true }`. Child → parent: `{ opened, failed, closes }`, `{ frames }`
 * (how many arrived since the last report), `{ samples, frame }` (`frame`: the text of one CLAIMED
 * frame received, which the syscall-only baseline then writes itself). The parent's side: bench/clients.ts.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { Open, Sample } from './clients';

const sockets: WebSocket[] = [];
/** Raw frames with their receive time; parsed only when reporting, so parsing adds no latency. */
let frames: Array<{ at: number; data: Buffer; tag?: number }> = [];
const closes: Record<string, number> = {};
const now = (): number => performance.timeOrigin + performance.now();

function openOne(o: Open, i: number): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(o.url, 'graphql-transport-ws', {
      localAddress: o.sources[i % o.sources.length],
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
    });
    let done = false;
    const finish = (ok: boolean): void => {
      if (done) return;
      done = true;
      resolve(ok);
    };
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: o.init[i % o.init.length] })));
    ws.on('message', (data: Buffer) => {
      const at = now();
      // Only the first bytes decide the kind: the handshake frames are tiny, events are kept raw.
      if (!done) {
        const m = JSON.parse(data.toString()) as { type: string };
        if (m.type === 'connection_ack')
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: o.query } }));
        else if (m.type === 'next') {
          frames.push({ at, data, tag: o.tag });
          finish(true); // SUBSCRIBED: the subscription is live
        } else if (m.type === 'error') finish(false);
        return;
      }
      frames.push({ at, data, tag: o.tag });
    });
    ws.on('close', (code) => {
      closes[code] = (closes[code] ?? 0) + 1;
      finish(false);
    });
    ws.on('error', () => finish(false));
    sockets.push(ws);
  });
}

async function open(o: Open): Promise<void> {
  let opened = 0;
  let failed = 0;
  for (let i = 0; i < o.count; i += o.batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(o.batch, o.count - i) }, (_, k) => openOne(o, i + k)),
    );
    for (const ok of results) {
      if (ok) opened++;
      else failed++;
    }
  }
  frames = [];
  process.send!({ opened, failed, closes });
}

function report(): void {
  let frame: string | undefined;
  const samples: Sample[] = frames.map(({ at, data, tag }) => {
    const text = data.toString();
    const m = JSON.parse(text) as {
      payload?: { data?: Record<string, { cursor: string; observedAt: string; type: string }>; errors?: unknown[] };
    };
    const e = m.payload?.data ? Object.values(m.payload.data)[0] : undefined;
    if (e?.type === 'CLAIMED') frame ??= text;
    const errors = m.payload?.errors?.length ?? 0;
    return { at, cursor: e?.cursor ?? '', observedAt: e?.observedAt ?? '', type: e?.type ?? 'none', tag, errors };
  });
  frames = [];
  process.send!({ samples, closes, frame });
}

process.on('message', (m: { open?: Open; report?: true; count?: true; close?: true }) => {
  if (m.open) void open(m.open);
  if (m.report) report();
  if (m.count) process.send!({ frames: frames.length });
  if (m.close) {
    for (const s of sockets) s.terminate();
    process.exit(0);
  }
});
