/**
 * Replays R14 of docs/reliability.md ("Resilience") against a running gateway with the demo's
 * backends and credentials (`npm start` prints them) and returns printable lines: one address
 * opens many subscriptions whose every event is large (300 `__typename` aliases, about 8 KB an
 * event), stops reading them, and makes events happen by creating and deleting volumes on
 * nomad-east (the demo's own activity, one step every 5 s, is too slow to fill a queue). Three
 * rounds, one per transport: paused SSE streams, paused multipart streams, paused graphql-ws
 * sockets. Each line gives the gateway's RSS and heap before and at their peak, the largest sum of
 * queued bytes its `/metrics` reported, the subscriptions cut, and the cut counter's reasons.
 *
 *   node --import tsx scripts/attacks/paused-streams.ts [http://127.0.0.1:4000]
 *
 * It sends only to the given address; every loop is bounded; the volumes it creates are deleted
 * and every stream and socket is closed at the end.
 */
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { messageText } from '../../server/ws/message-text';

const EAST = { 'x-nomad-token-nomad-east': 'demo-east-management' };
/** 300 aliases: 908 tokens (MAX_TOKENS is 1000), about 5 KB of text, 8 KB of JSON per event. */
const ALIASES = Array.from({ length: 300 }, (_, i) => `t${i}: __typename`).join(' ');
const SUB = `subscription { volumeChanged { type cursor ${ALIASES} } }`;

/** The sizes of one round. */
interface Round {
  transport: 'sse' | 'multipart' | 'ws';
  /** HTTP streams, or sockets. */
  connections: number;
  /** Subscriptions per socket (ws). */
  perSocket?: number;
}

const ROUNDS: Round[] = [
  { transport: 'sse', connections: 400 },
  { transport: 'multipart', connections: 100 },
  { transport: 'ws', connections: 5, perSocket: 100 },
];

/**
 * Events made per round at most. Over loopback the kernel takes up to about 2.5 MiB per connection
 * before the gateway queues anything (the send buffer grows with loopback's 64 KiB segments), so
 * a 1 MiB queue fills at about 450 events of 8 KB.
 */
const MAX_EVENTS = 800;

/** A sample's value (first match), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Sum of every series of `name` whose labels contain all of `labels`. */
function sum(text: string, name: string, labels: string[] = []): number {
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels.every((l) => line.includes(l))) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

const metrics = async (base: string): Promise<string> => (await fetch(`${base}/metrics`)).text().catch(() => '');
const MiB = (bytes: number | undefined): string => (bytes === undefined ? '?' : `${Math.round(bytes / 1_048_576)}`);

/** A raw HTTP stream from its own TCP connection: paused once its first result (SUBSCRIBED) arrived. */
function openHttpStream(base: string, accept: string): Promise<Socket | string> {
  const u = new URL(base);
  const body = JSON.stringify({ query: SUB });
  return new Promise((resolve) => {
    const s = connect(Number(u.port || 80), u.hostname);
    let got = '';
    const done = (v: Socket | string): void => {
      s.removeAllListeners('data');
      clearTimeout(t);
      resolve(v);
    };
    const t = setTimeout(() => done((s.destroy(), 'no SUBSCRIBED within 30 s')), 30_000);
    s.on('error', () => done('connection failed'));
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('"SUBSCRIBED"')) return done((s.pause(), s));
      if (/"errors"/.test(got) || !got.startsWith('HTTP/1.1 200'))
        done((s.destroy(), /"code":"(\w+)"/.exec(got)?.[1] ?? got.slice(0, 12)));
    });
    s.write(
      `POST /graphql HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nAccept: ${accept}\r\nX-Nomad-Token-nomad-east: ${EAST['x-nomad-token-nomad-east']}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

/** A graphql-ws socket with `n` subscriptions, paused once each was SUBSCRIBED. */
async function openSocket(base: string, n: number): Promise<WebSocket | string> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, ['graphql-transport-ws']);
  ws.on('error', () => undefined);
  return new Promise((resolve) => {
    let subscribed = 0;
    const t = setTimeout(() => (ws.terminate(), resolve(`${subscribed} of ${n} SUBSCRIBED within 30 s`)), 30_000);
    ws.once('unexpected-response', (_q, res) => (clearTimeout(t), resolve(`HTTP ${res.statusCode}`)));
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: EAST })));
    ws.on('message', (d) => {
      const m = JSON.parse(messageText(d));
      if (m.type === 'connection_ack')
        for (let i = 0; i < n; i++)
          ws.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query: SUB } }));
      else if (m.type === 'next' && m.payload?.data?.volumeChanged?.type === 'SUBSCRIBED' && ++subscribed === n) {
        clearTimeout(t);
        ws.removeAllListeners('message');
        ws.pause();
        resolve(ws);
      } else if (m.type === 'error') {
        clearTimeout(t);
        ws.terminate();
        resolve(String(m.payload?.[0]?.extensions?.code ?? 'error'));
      }
    });
  });
}

async function post(base: string, query: string, variables: unknown): Promise<any> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...EAST },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  return res.json();
}

const CREATE = 'mutation($i: CreateVolumeInput!) { createVolume(input: $i) { volume { id } } }';
const DELETE = 'mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { operation { state } } }';

/** Creates and deletes volumes on nomad-east, 10 at a time: about two events each. */
async function makeEvents(base: string, round: number, batch: number): Promise<void> {
  const ids = await Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      const nativeId = `attack-r14-${round}-${batch}-${i}`;
      const r = await post(base, CREATE, {
        i: {
          backend: 'nomad-east',
          name: nativeId,
          sizeBytes: 1_073_741_824,
          nomad: {
            nativeId,
            plugin: 'aws-ebs0',
            capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
          },
        },
      });
      return r.data?.createVolume?.volume?.id as string | undefined;
    }),
  );
  await Promise.all(ids.filter((id): id is string => !!id).map((volumeId) => post(base, DELETE, { i: { volumeId } })));
}

/**
 * Counts the events a reading SSE stream (the control) receives. Its credentials are nomad-east's
 * and nomad-west's, a key of their own: the paused ones may use up nomad-east's 500.
 */
async function control(base: string): Promise<{ events(): number; close(): void }> {
  const ctrl = new AbortController();
  let n = 0;
  void fetch(`${base}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...EAST,
      'x-nomad-token-nomad-west': 'demo-west-management',
    },
    body: JSON.stringify({ query: 'subscription { volumeChanged { type } }' }),
    signal: ctrl.signal,
  })
    .then(async (res) => {
      const dec = new TextDecoder();
      for await (const c of res.body as unknown as AsyncIterable<Uint8Array>)
        n += (dec.decode(c).match(/event: next/g) ?? []).length;
    })
    .catch(() => undefined);
  for (let i = 0; i < 100 && n === 0; i++) await new Promise((t) => setTimeout(t, 100));
  return { events: () => Math.max(0, n - 1), close: () => ctrl.abort() };
}

async function replayRound(base: string, r: Round, index: number): Promise<string> {
  const open: Array<Socket | WebSocket> = [];
  const refused = new Map<string, number>();
  // Open now, from the gateway's gauges: sockets, or this transport's streams but the control's.
  const openNow = (m: string): number =>
    r.transport === 'ws'
      ? sum(m, 'gateway_ws_connections')
      : sum(m, 'gateway_stream_subscriptions', [`transport="${r.transport}"`]) - (r.transport === 'sse' ? 1 : 0);
  const ctrl = await control(base);
  try {
    const start = await metrics(base);
    const rss0 = sample(start, 'process_resident_memory_bytes');
    const heap0 = sample(start, 'nodejs_heap_size_used_bytes');
    const cuts0 = sum(start, 'gateway_slow_consumer_cuts_total', [`transport="${r.transport}"`]);
    for (let i = 0; i < r.connections; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, r.connections - i) }, () =>
          r.transport === 'ws'
            ? openSocket(base, r.perSocket ?? 1)
            : openHttpStream(
                base,
                r.transport === 'sse' ? 'text/event-stream' : 'multipart/mixed;subscriptionSpec=1.0',
              ),
        ),
      );
      for (const c of batch)
        if (typeof c === 'string') refused.set(c, (refused.get(c) ?? 0) + 1);
        else open.push(c);
    }
    const subscribed = r.transport === 'ws' ? open.length * (r.perSocket ?? 1) : open.length;
    const opened = await metrics(base);
    let peakRss = sample(opened, 'process_resident_memory_bytes') ?? 0;
    let peakHeap = sample(opened, 'nodejs_heap_size_used_bytes') ?? 0;
    let peakQueued = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const m = await metrics(base);
        peakRss = Math.max(peakRss, sample(m, 'process_resident_memory_bytes') ?? 0);
        peakHeap = Math.max(peakHeap, sample(m, 'nodejs_heap_size_used_bytes') ?? 0);
        peakQueued = Math.max(peakQueued, sum(m, 'gateway_ws_queue_bytes', ['aggregate="sum"']));
        await new Promise((t) => setTimeout(t, 200));
      }
    })();
    const started = performance.now();
    for (let batch = 0; ctrl.events() < MAX_EVENTS && openNow(await metrics(base)) > 0; batch++)
      await makeEvents(base, index, batch);
    await new Promise((t) => setTimeout(t, 1_000));
    sampling = false;
    await sampler;
    const end = await metrics(base);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const reasons = ['queue', 'address', 'hub']
      .map(
        (reason) =>
          `${reason} ${sum(end, 'gateway_slow_consumer_cuts_total', [`transport="${r.transport}"`, `reason="${reason}"`])}`,
      )
      .join(', ');
    const cutCounter = end.includes('gateway_slow_consumer_cuts_total')
      ? `cut counter +${sum(end, 'gateway_slow_consumer_cuts_total', [`transport="${r.transport}"`]) - cuts0} (${reasons})`
      : 'no cut counter';
    const still = `${openNow(end)} of ${open.length} ${r.transport === 'ws' ? 'sockets' : 'streams'} still open`;
    const what =
      r.transport === 'ws'
        ? `${r.connections} paused graphql-ws sockets × ${r.perSocket} subscriptions`
        : `${r.connections} paused ${r.transport === 'sse' ? 'SSE' : 'multipart'} streams`;
    const refusals = refused.size ? `; refused ${[...refused].map(([c, n]) => `${n}× ${c}`).join(', ')}` : '';
    return `| R14 ${what}, one address and token, 300 \`__typename\` aliases | ${subscribed} subscribed${refusals}; ${ctrl.events()} events in ${seconds} s; RSS ${MiB(rss0)} → peak ${MiB(peakRss)} MiB (+${MiB(peakRss - (rss0 ?? 0))}), heap ${MiB(heap0)} → peak ${MiB(peakHeap)} MiB; queued bytes peak ${MiB(peakQueued)} MiB (gateway_ws_queue_bytes, sum); ${still}; ${cutCounter} |`;
  } finally {
    ctrl.close();
    for (const c of open) {
      if (c instanceof WebSocket) c.terminate();
      else c.destroy();
    }
    // The gateway sees the connections go and gives their places back.
    await new Promise((t) => setTimeout(t, 2_000));
  }
}

/** Replays R14 against `base` (e.g. http://127.0.0.1:4000): one line per transport. */
export async function replayPausedStreams(
  base = 'http://127.0.0.1:4000',
  rounds: readonly Round[] = ROUNDS,
): Promise<string[]> {
  base = base.replace(/\/+$/, '').replace(/\/graphql$/, '');
  const lines = ['| attack | what it got |', '|---|---|'];
  for (const [i, r] of rounds.entries()) lines.push(await replayRound(base, r, i));
  return lines;
}

if (require.main === module) {
  void replayPausedStreams(process.argv[2]).then((lines) => console.log(lines.join('\n')));
}
