/**
 * R17 of docs/reliability.md against a running gateway with the demo's backends: one tenant leaves
 * one of its own volumes `reserved` (`reserveCinderVolume` with the demo's Keystone token) while a
 * subscriber listens, and the OpenStack watcher's volume list reads are counted per minute from the
 * gateway's own /metrics (`gateway_backend_calls_total{backend="openstack",endpoint="GET /volumes/detail"}`:
 * the watcher's list and callers' lists share the label, and nobody else lists while it counts).
 * A transitional status keeps the watcher fast only for `watchTransitionWindowMs` after it is first
 * seen; before that bound, for as long as the volume stayed reserved. The volume is unreserved at the end.
 *
 * Meant for `npm run attacks` (scripts/replay-attacks.ts) against the demo, which `npm start` serves.
 */
import WebSocket from 'ws';
import { messageText } from '../../server/ws/message-text';

export interface ReservePollOptions {
  /** The tenant's headers. @default the demo's Keystone token of user demo */
  credential?: Record<string, string>;
  /** The OpenStack backend's id. @default 'openstack' */
  backend?: string;
  /** The gateway's fast window (`watchTransitionWindowMs`) the spans are cut at. @default 30000 (the default setting) */
  windowMs?: number;
  /** Length of the baseline and of the span counted after the window. @default 30000 */
  spanMs?: number;
}

const LIST = 'GET /volumes/detail';

/** The list reads the gateway has counted for `backend` so far. */
async function listReads(root: string, backend: string): Promise<number> {
  const text = await (await fetch(`${root}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n')) {
    if (
      line.startsWith('gateway_backend_calls_total{') &&
      line.includes(`backend="${backend}"`) &&
      line.includes(`endpoint="${LIST}"`)
    )
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A graphql-ws subscriber of one volume's changes, once SUBSCRIBED. `changed()` resolves with the
 * time (`performance.now()`) of the first change after `changed()` was called; `close()` ends it.
 */
async function subscriber(
  root: string,
  volumeId: string,
  credential: Record<string, string>,
): Promise<{ changed(): Promise<number>; close(): void }> {
  const ws = new WebSocket(`${root.replace(/^http/, 'ws')}/graphql`, ['graphql-transport-ws']);
  let onChange: ((at: number) => void) | null = null;
  const subscribed = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no SUBSCRIBED within 20 s')), 20_000);
    ws.on('message', (d) => {
      const m = JSON.parse(messageText(d)) as {
        type: string;
        id?: string;
        payload?: { data?: { volumeChanged?: { type: string } } };
      };
      if (m.type === 'connection_ack') {
        const query = 'subscription($v: [ID!]) { volumeChanged(filter: { volumeIds: $v }) { type } }';
        ws.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query, variables: { v: [volumeId] } } }));
      } else if (m.type === 'next' && m.id === 's') {
        clearTimeout(t);
        resolve();
        if (m.payload?.data?.volumeChanged?.type !== 'SUBSCRIBED') onChange?.(performance.now());
      } else if (m.type === 'error') reject(new Error(`subscription refused: ${messageText(d)}`));
    });
    ws.on('error', reject);
    ws.on('close', (code) => reject(new Error(`socket closed ${code}`)));
  });
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: credential })));
  await subscribed;
  return {
    changed: () =>
      new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('the watcher did not report the change within 60 s')), 60_000);
        onChange = (at) => {
          clearTimeout(t);
          onChange = null;
          resolve(at);
        };
      }),
    close: () => ws.terminate(),
  };
}

/**
 * Replays R17 against the gateway at `base` and returns the rows of a Markdown table (header
 * first), ready to print. Takes the baseline span, up to one slow interval until the watcher sees
 * the reserve, the window and the span after it (~100 s by default).
 */
export async function replayReservePoll(base: string, o: ReservePollOptions = {}): Promise<string[]> {
  const root = base.replace(/\/+$/, '').replace(/\/graphql$/, '');
  const credential = o.credential ?? { 'x-auth-token': 'demo-openstack-token' };
  const backend = o.backend ?? 'openstack';
  const windowMs = o.windowMs ?? 30_000;
  const spanMs = o.spanMs ?? 30_000;
  const gql = async (query: string, variables?: unknown): Promise<any> => {
    const res = await fetch(`${root}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credential },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(60_000),
    });
    return res.json();
  };
  const list = await gql(
    `{ volumes(first: 100, filter: { backends: ["${backend}"], status: [AVAILABLE] }) { nodes { id name } } }`,
  );
  // The demo activity attaches and detaches `ci-scratch` by itself: any other of the tenant's volumes.
  const volume = (list?.data?.volumes?.nodes ?? []).find(
    (v: { name: string } | null) => v && v.name !== 'ci-scratch',
  ) as { id: string; name: string } | undefined;
  if (!volume)
    return [`R17: no available volume of the tenant on backend "${backend}" (${JSON.stringify(list?.errors ?? null)})`];

  const perMinute = (n: number, ms: number): string => ((n * 60_000) / ms).toFixed(0);
  const sub = await subscriber(root, volume.id, credential);
  /** List reads over `ms` from now. */
  const count = async (ms: number): Promise<{ n: number; ms: number }> => {
    const at = await listReads(root, backend);
    const t = performance.now();
    await sleep(ms);
    return { n: (await listReads(root, backend)) - at, ms: performance.now() - t };
  };
  try {
    await sleep(2_000); // the read at the subscription's start
    const baseline = await count(spanMs);

    const reservedAt = performance.now();
    const seen = sub.changed();
    const reserved = await gql(
      'mutation($id: ID!) { reserveCinderVolume(input: { volumeId: $id }) { volume { backendStatus } operation { state } } }',
      { id: volume.id },
    );
    const status =
      reserved?.data?.reserveCinderVolume?.volume?.backendStatus ?? JSON.stringify(reserved?.errors ?? null);
    // The window starts when the watcher first sees the status (its next poll: Cinder's synchronous actions nudge nothing).
    const seenAt = await seen;
    const inWindow = await count(Math.max(0, seenAt + windowMs - performance.now()));
    // A poll planned just before the window's end may still be a fast one: count a little later.
    const margin = Math.min(5_000, windowMs / 4);
    await sleep(margin);
    const after = await count(spanMs);
    const s = (ms: number): string => (ms / 1000).toFixed(0);
    return [
      `| R17: volume "${volume.name}" reserved by its tenant (${status}), one subscriber | list reads | per minute |`,
      '|---|---|---|',
      `| ${s(baseline.ms)} s before the reserve | ${baseline.n} | ${perMinute(baseline.n, baseline.ms)} |`,
      `| from the watcher's first sight of it (${s(seenAt - reservedAt)} s after the reserve) to the window's end, ${s(inWindow.ms)} s | ${inWindow.n} | ${perMinute(inWindow.n, inWindow.ms)} |`,
      `| ${s(after.ms)} s from ${s(windowMs + margin)} s after the first sight, still reserved | ${after.n} | ${perMinute(after.n, after.ms)} |`,
    ];
  } finally {
    sub.close();
    await gql('mutation($id: ID!) { unreserveCinderVolume(input: { volumeId: $id }) { operation { state } } }', {
      id: volume.id,
    }).catch(() => undefined);
  }
}
