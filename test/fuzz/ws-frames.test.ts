/**
 * Hostile graphql-ws frames against a real gateway (live hub, Nomad watcher on the event stream)
 * and real simulators: random and malformed frames, connection_init payloads with hostile values,
 * subscribe messages with hostile documents, arguments, cursors and ids, in random order. The
 * gateway may close a socket only with a documented code (docs/subscriptions.md), never answers
 * INTERNAL_SERVER_ERROR, has no unhandled rejection, keeps serving HTTP, and frees every
 * subscription once the sockets are gone. Short mode here (WS_FUZZ_RUNS raises it; WS_FUZZ_SEED replays).
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';
import { hostileText, mixedString } from './hostile-strings';
import { messageText } from '../../server/ws/message-text';

const RUNS = Number(process.env.WS_FUZZ_RUNS ?? 300);
const SEED = Number(process.env.WS_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Close codes the gateway documents (graphql-ws's own, 1009 for oversized frames, 4413 slow consumer). */
const DOCUMENTED = new Set([1000, 1009, 4400, 4401, 4403, 4406, 4408, 4409, 4413, 4429]);

let gw: GatewayUnderTest;
let wsUrl: string;
const rejections: unknown[] = [];
const onRejection = (r: unknown): void => void rejections.push(r);

const VOLUME = encodeGlobalId({ kind: 'Volume', backend: 'east', scope: 'default', nativeId: 'vol-000' });
const names = ['east', 'default', 'analytics', 'vol-000', 'node-1111', VOLUME, MGMT];

const json = fc.jsonValue({ maxDepth: 3 });
const id = fc.oneof(fc.constantFrom('1', '2', 'a'), mixedString(8), hostileText(names, 300));
const credentials = fc.dictionary(
  fc.oneof(
    fc.constantFrom('X-Nomad-Token', 'x-nomad-token-east', 'X-Auth-Token', 'X-Auth-Token-os', 'authorization'),
    mixedString(12),
  ),
  fc.oneof(fc.constant(MGMT), hostileText(names, 3000), json),
  { maxKeys: 4 },
);
const types = fc.array(
  fc.oneof(fc.constantFrom('CREATED', 'CLAIMED', 'RELEASED', 'SUBSCRIBED', 'DELETED'), mixedString(10)),
  { maxLength: 5 },
);
const strings = (max: number): fc.Arbitrary<string[]> =>
  fc.array(fc.oneof(fc.constant(VOLUME), hostileText(names, 500)), { maxLength: max });

const subscription = fc.oneof(
  fc.record({
    query: fc.constant(
      'subscription($f: VolumeChangeFilter, $s: String) { volumeChanged(filter: $f, since: $s) { type cursor volumeId volume { id status attachments { id state } } omittedBackends { reason code } } }',
    ),
    variables: fc.record(
      {
        f: fc.oneof(
          json,
          fc.record(
            { backends: strings(3), namespace: hostileText(names, 200), volumeIds: strings(150), types },
            { requiredKeys: [] },
          ),
        ),
        s: fc.oneof(fc.constant(null), hostileText(names, 2000), fc.base64String({ maxLength: 60 })),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    query: fc.constant(
      'subscription($t: VolumeAttachmentWatchTarget!, $s: String) { attachmentChanged(target: $t, since: $s) { type cursor attachment { id state } } }',
    ),
    variables: fc.record({
      t: fc.oneof(
        json,
        fc.record(
          {
            volume: hostileText(names, 300),
            consumer: hostileText(names, 300),
            node: hostileText(names, 300),
            server: hostileText(names, 300),
          },
          { requiredKeys: [] },
        ),
      ),
      s: fc.oneof(fc.constant(null), hostileText(names, 300)),
    }),
  }),
  fc.record({
    query: fc.constant('subscription($id: ID!) { operationUpdated(id: $id) { id state } }'),
    variables: fc.record({ id: fc.oneof(hostileText(names, 2000), json) }),
  }),
  fc.record({
    query: fc.oneof(
      hostileText(names, 5000),
      fc
        .nat(60)
        .map(
          (n) =>
            `subscription { volumeChanged { ${'volume { attachments { volume { '.repeat(n)}id${' } } }'.repeat(n)} } }`,
        ),
      fc.constant('{ volumes { nodes { id } } }'),
      fc.constant('subscription { a: volumeChanged { type } b: attachmentChanged(target: {}) { type } }'),
    ),
  }),
);

const frame = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant('subscribe'), id, payload: subscription }).map((m) => JSON.stringify(m)),
  },
  {
    weight: 2,
    arbitrary: fc
      .record(
        { type: fc.constant('connection_init'), payload: fc.oneof(credentials, json) },
        { requiredKeys: ['type'] },
      )
      .map((m) => JSON.stringify(m)),
  },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          type: fc.constantFrom('complete', 'ping', 'pong', 'next', 'error', 'connection_ack', 'subscribe'),
          id: fc.oneof(id, json),
          payload: json,
        },
        { requiredKeys: ['type'] },
      )
      .map((m) => JSON.stringify(m)),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      hostileText(names, 70_000),
      json.map((j) => JSON.stringify(j)),
    ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
);

const session = fc.record({ init: fc.boolean(), frames: fc.array(frame, { minLength: 1, maxLength: 6 }) });

/** Plays one session; answers the close code (null: still open when we stopped) and the messages. */
async function play(s: {
  init: boolean;
  frames: Array<string | Buffer>;
}): Promise<{ code: number | null; messages: any[] }> {
  const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
  const messages: any[] = [];
  let code: number | null = null;
  const closed = new Promise<void>((r) => ws.on('close', (c) => ((code = c), r())));
  ws.on('message', (d) => {
    try {
      messages.push(JSON.parse(messageText(d)));
    } catch {
      messages.push({ unparsable: messageText(d).slice(0, 200) });
    }
  });
  ws.on('error', () => undefined);
  await new Promise<void>((r) => (ws.readyState === ws.OPEN ? r() : ws.once('open', () => r())));
  if (s.init) ws.send(JSON.stringify({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT } }));
  for (const f of s.frames) {
    if (ws.readyState !== ws.OPEN) break;
    ws.send(f);
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.race([closed, new Promise((r) => setTimeout(r, 150))]);
  if (code === null) {
    ws.terminate();
    await closed;
    return { code: null, messages };
  }
  return { code, messages };
}

/** Open subscriptions and sockets, from /metrics (the hub's counts and the transport's). */
async function openCounts(): Promise<{ subscriptions: number; sockets: number }> {
  const metrics = await (await fetch(gw.gateway.url.replace('/graphql', '/metrics'))).text();
  const subscriptions = metrics
    .split('\n')
    .filter((l) => l.startsWith('gateway_ws_subscriptions{'))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  return { subscriptions, sockets: Number(/^gateway_ws_connections (\d+)/m.exec(metrics)?.[1] ?? NaN) };
}

/** Waits until nothing is open (each session's socket is closed before this is asked). */
async function drained(ms: number): Promise<{ subscriptions: number; sockets: number } | null> {
  const end = Date.now() + ms;
  for (;;) {
    const c = await openCounts();
    if (c.subscriptions === 0 && c.sockets === 0) return null;
    if (Date.now() > end) return c;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const internal = (errors: unknown): boolean =>
  Array.isArray(errors) && errors.some((e: any) => e?.extensions?.code === 'INTERNAL_SERVER_ERROR');

beforeAll(async () => {
  process.on('unhandledRejection', onRejection);
  const sim = await startNomad();
  seedVolumes(sim, 4);
  seedVolumes(sim, 2, 'analytics', 'ana');
  gw = await startGatewayFor([{ id: 'east', url: sim.url, token: MGMT }]);
  wsUrl = gw.gateway.url.replace(/^http/, 'ws');
});
afterAll(async () => {
  process.off('unhandledRejection', onRejection);
  await disposeAll();
});

it(`should survive ${RUNS} hostile graphql-ws sessions (seed ${SEED}) with documented close codes and no internal errors`, async () => {
  await fc.assert(
    fc.asyncProperty(session, async (s) => {
      const { code, messages } = await play(s);
      if (code !== null && code !== 1006 && !DOCUMENTED.has(code)) throw new Error(`undocumented close code ${code}`);
      for (const m of messages) {
        if (m.unparsable !== undefined) throw new Error(`unparsable frame from the gateway: ${m.unparsable}`);
        if (m.type === 'error' && internal(m.payload))
          throw new Error(`INTERNAL_SERVER_ERROR: ${JSON.stringify(m.payload).slice(0, 300)}`);
        if (m.type === 'next' && internal(m.payload?.errors))
          throw new Error(`INTERNAL_SERVER_ERROR in next: ${JSON.stringify(m.payload).slice(0, 300)}`);
      }
      const left = await drained(3000);
      if (left)
        throw new Error(
          `after the socket closed: ${left.subscriptions} subscriptions and ${left.sockets} sockets still open`,
        );
    }),
    {
      numRuns: RUNS,
      seed: SEED,
      endOnFailure: true,
      // Found by this property: refused operationUpdated subscriptions (bad id) stayed counted as open.
      examples: [
        [
          {
            init: true,
            frames: [
              JSON.stringify({
                type: 'subscribe',
                id: '1',
                payload: {
                  query: 'subscription($id: ID!) { operationUpdated(id: $id) { id state } }',
                  variables: { id: ' /j' },
                },
              }),
            ],
          },
        ],
      ],
    },
  );
  expect(rejections).toEqual([]);
  // Still serving, and every subscription of the closed sockets freed.
  const res = await gw.gql('{ volumes(first: 1) { nodes { id } } }', {}, { 'x-nomad-token': MGMT });
  expect(res.body.errors).toBeUndefined();
  expect(await drained(10_000)).toBeNull();
}, 180_000);
