/**
 * Replays R1, R2 and R3 of docs/reliability.md ("Resilience") over graphql-ws against a running
 * gateway with the demo's backends and credentials (`npm start` prints them) and returns one
 * printable row per attack: what was sent, what it got. `npm run attacks` prints them.
 *
 *   R1  one address: sockets with a valid nomad-east token plus a junk generic X-Nomad-Token each,
 *       subscriptions with 60 KB ids; then the largest subscriptions the limits allow; then small
 *       ones (the per-credential quota); the gateway's RSS from its own /metrics, when it reports it
 *   R2  a garbage Keystone token: alone (filter openstack), and with a valid Nomad token
 *   R3  a generic X-Nomad-Token valid on nomad-west only
 *
 * It sends only to the given address; every loop is bounded, and every socket is closed at the end.
 */
import WebSocket from 'ws';
import { messageText } from '../../server/ws/message-text';

/** One attack and what it got. */
export interface AttackRow {
  attack: string;
  got: string;
}

const EAST = 'demo-east-management';
const WEST = 'demo-west-management';
const SUB = 'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type } }';
const OMITTED = 'subscription { volumeChanged { type omittedBackends { backend { id } reason code } } }';

interface Socket {
  ws: WebSocket;
  /** Next message for `id` (parsed), or a close: `{ closed: code }`; `{ timeout: true }` past `ms`. */
  next(id: string, ms?: number): Promise<any>;
  close(): void;
}

/** A socket past `connection_ack`, or the HTTP status or close code that refused it. */
async function open(wsUrl: string, payload: Record<string, string>): Promise<Socket | string> {
  const ws = new WebSocket(wsUrl, ['graphql-transport-ws']);
  const inbox: any[] = [];
  let closed: number | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => waiters.forEach((w) => w());
  ws.on('message', (d) => {
    inbox.push(JSON.parse(messageText(d)));
    wake();
  });
  ws.on('close', (code) => {
    closed = code;
    wake();
  });
  ws.on('error', () => undefined);
  const take = (match: (m: any) => boolean, ms: number): Promise<any> =>
    new Promise((resolve) => {
      const check = (): void => {
        const i = inbox.findIndex(match);
        if (i >= 0) return done(inbox.splice(i, 1)[0]);
        if (closed !== undefined) return done({ closed });
      };
      const done = (v: unknown): void => {
        clearTimeout(t);
        waiters.delete(check);
        resolve(v);
      };
      const t = setTimeout(() => done({ timeout: true }), ms);
      waiters.add(check);
      check();
    });
  const opened = await new Promise<string | undefined>((resolve) => {
    ws.once('open', () => resolve(undefined));
    ws.once('unexpected-response', (_q, res) => resolve(`HTTP ${res.statusCode}`));
    ws.once('error', (e) => resolve(e.message));
  });
  if (opened) return opened;
  ws.send(JSON.stringify({ type: 'connection_init', payload }));
  const ack = await take((m) => m.type === 'connection_ack', 10_000);
  if (ack.type !== 'connection_ack') return ack.closed ? `closed ${ack.closed}` : 'no connection_ack';
  return { ws, next: (id, ms = 15_000) => take((m) => m.id === id, ms), close: () => ws.terminate() };
}

/** The gateway's RSS in MiB from its /metrics (prom-client's process metrics), when it reports them. */
async function rssMiB(base: string): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text().catch(() => '');
  const m = /^process_resident_memory_bytes (\d+)/m.exec(text);
  return m ? Math.round(Number(m[1]) / 1_048_576) : undefined;
}

/** What one subscription got first: SUBSCRIBED (with its omissions), an error code, a close code. */
function firstOf(m: any): string {
  if (m.closed) return `socket closed ${m.closed}`;
  if (m.timeout) return 'nothing within the wait';
  const errors = m.type === 'error' ? m.payload : m.payload?.errors;
  if (errors?.length)
    return `${m.type === 'error' ? 'error' : 'result'} ${errors.map((e: any) => [e.extensions?.code, e.extensions?.limit].filter(Boolean).join(' ')).join(', ')}`;
  const v = m.payload?.data?.volumeChanged;
  if (!v) return m.type;
  const omitted = (v.omittedBackends ?? []).map((o: any) => `${o.backend.id} ${o.reason}${o.code ? `/${o.code}` : ''}`);
  return omitted.length ? `${v.type}, omitting ${omitted.join('; ')}` : `${v.type}, omitting none`;
}

/** Sends `perSocket` subscriptions on each of `sockets` sockets; counts what they got. */
async function flood(
  wsUrl: string,
  sockets: number,
  perSocket: number,
  id: (s: number, i: number) => string,
  query: string,
  held: Socket[],
): Promise<string> {
  const got = new Map<string, number>();
  for (let s = 0; s < sockets; s++) {
    const c = await open(wsUrl, {
      'X-Nomad-Token-nomad-east': EAST,
      'X-Nomad-Token': `junk-${s}-${Math.random().toString(36).slice(2)}`,
    });
    if (typeof c === 'string') {
      got.set(`socket refused: ${c}`, (got.get(`socket refused: ${c}`) ?? 0) + 1);
      continue;
    }
    held.push(c);
    const ids = Array.from({ length: perSocket }, (_, i) => id(s, i));
    for (const x of ids) c.ws.send(JSON.stringify({ id: x, type: 'subscribe', payload: { query } }));
    for (const x of ids) {
      const what = firstOf(await c.next(x));
      got.set(what, (got.get(what) ?? 0) + 1);
      if (what.startsWith('socket closed')) break;
    }
  }
  return [...got].map(([what, n]) => `${n}× ${what}`).join('; ');
}

/** Replays R1–R3 against `base` (e.g. http://127.0.0.1:4000). */
export async function replayWsAttacks(base = 'http://127.0.0.1:4000'): Promise<AttackRow[]> {
  base = base.replace(/\/+$/, '').replace(/\/graphql$/, '');
  const wsUrl = `${base.replace(/^http/, 'ws')}/graphql`;
  const rows: AttackRow[] = [];
  const held: Socket[] = [];
  const release = (): void => void held.splice(0).forEach((c) => c.close());
  try {
    const before = await rssMiB(base);
    const longIds = await flood(wsUrl, 20, 100, (s, i) => `${s}-${i}-${'x'.repeat(60_000)}`, SUB, held);
    const afterLong = await rssMiB(base);
    rows.push({
      attack: 'R1 20 sockets × 100 subscriptions with 60 KB ids, valid nomad-east token + junk X-Nomad-Token',
      got: `${longIds}${before !== undefined ? `; RSS ${before} → ${afterLong} MiB` : ''}`,
    });
    release();
    const padded = `${SUB}\n#${'p'.repeat(16_000)}`;
    const legal = await flood(wsUrl, 20, 100, (s, i) => `${s}-${i}-`.padEnd(128, 'y'), padded, held);
    rows.push({
      attack: 'R1 the same with 128-character ids and 16 KB queries (the largest allowed)',
      got: `${legal}${before !== undefined ? `; RSS ${await rssMiB(base)} MiB` : ''}`,
    });
    release();
    await new Promise((r) => setTimeout(r, 1_000));
    const small = await flood(wsUrl, 20, 100, (s, i) => `${s}-${i}`, SUB, held);
    rows.push({
      attack: 'R1 the same with small subscriptions (one valid token, a new junk token per socket)',
      got: `${small}${before !== undefined ? `; RSS ${await rssMiB(base)} MiB` : ''}`,
    });
    release();

    const started = performance.now();
    const alone = await open(wsUrl, { 'X-Auth-Token': 'gAAAAAgarbage-keystone-token' });
    if (typeof alone === 'string')
      rows.push({
        attack: 'R2 garbage Keystone token, volumeChanged(filter: { backends: ["openstack"] })',
        got: alone,
      });
    else {
      held.push(alone);
      alone.ws.send(
        JSON.stringify({
          id: 'r2',
          type: 'subscribe',
          payload: { query: 'subscription { volumeChanged(filter: { backends: ["openstack"] }) { type } }' },
        }),
      );
      const got = firstOf(await alone.next('r2', 30_000));
      rows.push({
        attack: 'R2 garbage Keystone token, volumeChanged(filter: { backends: ["openstack"] })',
        got: `${got} after ${Math.round(performance.now() - started)} ms`,
      });
    }
    const both = await open(wsUrl, {
      'X-Auth-Token': 'gAAAAAgarbage-keystone-token',
      'X-Nomad-Token-nomad-east': EAST,
      'X-Nomad-Token-nomad-west': WEST,
    });
    if (typeof both !== 'string') {
      held.push(both);
      both.ws.send(JSON.stringify({ id: 'r2b', type: 'subscribe', payload: { query: OMITTED } }));
      rows.push({
        attack: 'R2 garbage Keystone token with valid Nomad tokens, all backends',
        got: firstOf(await both.next('r2b', 30_000)),
      });
    }

    const r3 = await open(wsUrl, { 'X-Nomad-Token': WEST });
    if (typeof r3 !== 'string') {
      held.push(r3);
      r3.ws.send(
        JSON.stringify({
          id: 'r3',
          type: 'subscribe',
          payload: {
            query:
              'subscription { volumeChanged(filter: { backends: ["nomad-east", "nomad-west"] }) { type omittedBackends { backend { id } reason code } } }',
          },
        }),
      );
      rows.push({
        attack: 'R3 generic X-Nomad-Token valid on nomad-west only, both clusters',
        got: firstOf(await r3.next('r3', 30_000)),
      });
    }
  } finally {
    release();
  }
  return rows;
}

if (require.main === module) {
  void replayWsAttacks(process.argv[2]).then((rows) => {
    console.log('| attack | got |\n|---|---|');
    for (const r of rows) console.log(`| ${r.attack} | ${r.got} |`);
  });
}
