/**
 * Tracing end to end (issue 19 item 2, docs/tracing.md): a real OTLP/HTTP receiver (node:http,
 * `POST /v1/traces`, http/json), the gateway as a child process with the standard OTEL_* variables,
 * a Nomad simulator. A query and a graphql-ws subscription carry a `traceparent`; the spans that
 * reach the receiver continue that trace, with a CLIENT span per backend call under the operation's
 * span, and the simulator sees the same trace id in the `traceparent` of its requests. An event
 * caused by an attach or an extend is delivered in a span of its own, linked to the mutation's span.
 */
import { randomBytes } from 'node:crypto';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, MGMT, OS, seedVolumes, startNomad, startOpenStack } from '../support/harness';
import { startGatewayProcess } from '../support/gateway-process';
import {
  attr,
  CLIENT,
  SERVER,
  spansIn,
  startOtlpReceiver,
  type OtlpReceiver,
  type OtlpSpan,
} from '../support/otlp-receiver';
import { until } from '../support/until';
import { claim, rawClient } from '../ws/helpers';

let otlp: OtlpReceiver;
/** Every span received so far, and the content types of the exports. */
const receiver = {
  get spans(): OtlpSpan[] {
    return otlp.requests.flatMap(spansIn);
  },
  get contentTypes(): Set<string> {
    return new Set(otlp.requests.map((r) => r.contentType));
  },
};
let sim: NomadSimulator;
let os: Awaited<ReturnType<typeof startOpenStack>>;
let gateway: ReturnType<typeof startGatewayProcess> | undefined;
let graphqlUrl: string;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  sim = await startNomad();
  seedVolumes(sim, 2);
  os = await startOpenStack();
  gateway = startGatewayProcess({
    LOG_LEVEL: 'warn',
    // A memory backend for the attach whose events are delivered (Nomad attaches through its scheduler).
    // `west` is the same Nomad without a service token: no watcher, so its reads are always backend calls (east's
    // watcher, once current, serves them from its view, and the query test would see fewer calls).
    GATEWAY_BACKENDS: `east=nomad@${sim.url},west=nomad@${sim.url},lab=memory,os=openstack@${os.backend().url}`,
    GATEWAY_BACKEND_OS_USERNAME: OS.adminUser,
    GATEWAY_BACKEND_OS_PASSWORD: OS.adminPassword,
    GATEWAY_BACKEND_OS_PROJECT_NAME: 'demo',
    GATEWAY_BACKEND_OS_WATCH_FAST_MS: '100',
    GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '200',
    GATEWAY_BACKEND_EAST_TOKEN: MGMT,
    GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '300',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    // Batches leave every 100 ms instead of 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    // The watcher tests below look at background traces, off by default (test/tracing/background.test.ts).
    OTEL_TRACES_BACKGROUND_SAMPLE_RATIO: '1',
  });
  graphqlUrl = await gateway.serving();
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  otlp?.close();
  await disposeAll();
});

/** A caller's span context: a fresh trace id and parent span id. */
function callerTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const spansOf = (traceId: string): OtlpSpan[] => receiver.spans.filter((s) => s.traceId === traceId);

describe('OpenTelemetry traces', () => {
  it('should continue the caller trace of a query: SERVER span under the caller, a CLIENT span per backend call under it, traceparent at the backend', async () => {
    const caller = callerTrace();
    sim.clearRequests();
    const res = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent, 'x-nomad-token': MGMT },
      body: JSON.stringify({
        query:
          'query ListVolumes($first: Int) { volumes(first: $first, filter: { backends: ["west"] }) { nodes { id name attachments { id } } } }',
        variables: { first: 2 },
      }),
    });
    const body = (await res.json()) as { data?: { volumes: { nodes: unknown[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data!.volumes.nodes).toHaveLength(2);

    // The operation span and the three backend calls (one list, two reads for the attachments).
    await until(
      () =>
        spansOf(caller.traceId).filter((s) => s.kind === CLIENT).length >= 3 &&
        spansOf(caller.traceId).some((s) => s.kind === SERVER),
      'the spans to be exported',
      20_000,
    );
    const spans = spansOf(caller.traceId);
    const server = spans.filter((s) => s.kind === SERVER);
    expect(server).toHaveLength(1);
    const op = server[0]!;
    expect(op.parentSpanId).toBe(caller.spanId);
    expect(op.name).toBe('query ListVolumes');
    expect(attr(op, 'graphql.operation.type')).toBe('query');
    expect(attr(op, 'graphql.operation.name')).toBe('ListVolumes');
    // Variables, documents and tokens never become attributes.
    expect(JSON.stringify(op)).not.toContain(MGMT);
    expect(JSON.stringify(op)).not.toContain('"first"');

    const clients = spans.filter((s) => s.kind === CLIENT);
    for (const c of clients) {
      expect(c.parentSpanId).toBe(op.spanId);
      expect(attr(c, 'gateway.backend.id')).toBe('west');
      expect(attr(c, 'http.response.status_code')).toBe(200);
      expect(JSON.stringify(c)).not.toContain(MGMT);
    }
    // Route templates, not raw paths: the ids are masked.
    expect(
      clients.map((c) => `${String(attr(c, 'http.request.method'))} ${String(attr(c, 'url.template'))}`).sort(),
    ).toEqual(['GET /v1/volume/csi/:id', 'GET /v1/volume/csi/:id', 'GET /v1/volumes']);
    expect(clients.map((c) => c.name)).toContain('GET /v1/volume/csi/:id');

    // The backend received the trace: every request of this operation carries a traceparent of the caller's trace, naming its CLIENT span.
    const calls = sim
      .requests()
      .filter((r) => r.headers['x-nomad-token'] === MGMT && r.headers.traceparent?.includes(caller.traceId));
    expect(calls).toHaveLength(3);
    const sentParents = calls.map((r) => r.headers.traceparent!.split('-')[2]).sort();
    expect(sentParents).toEqual(clients.map((c) => c.spanId).sort());
    expect(receiver.contentTypes).toEqual(new Set(['application/json']));
  }, 30_000);

  it('should give a graphql-ws subscription the trace of its upgrade request', async () => {
    const caller = callerTrace();
    const c = await rawClient(graphqlUrl.replace(/^http/, 'ws'), { headers: { traceparent: caller.traceparent } });
    try {
      c.send({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({
        id: 's1',
        type: 'subscribe',
        payload: { query: 'subscription Changes { volumeChanged { type cursor } }' },
      });
      const first = await c.nextFor('s1');
      expect(first.payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      await until(
        () => spansOf(caller.traceId).some((s) => s.kind === SERVER),
        'the subscription span to be exported',
        20_000,
      );
      const op = spansOf(caller.traceId).find((s) => s.kind === SERVER)!;
      expect(op.parentSpanId).toBe(caller.spanId);
      expect(op.name).toBe('subscription Changes');
      expect(attr(op, 'gateway.transport')).toBe('graphql-ws');
      // The start's backend calls (the subscriber's access check) are its children.
      for (const s of spansOf(caller.traceId).filter((x) => x.kind === CLIENT)) expect(s.parentSpanId).toBe(op.spanId);
    } finally {
      c.ws.close();
    }
  }, 30_000);

  it('should link the delivery span of an event caused by a mutation to that mutation span', async () => {
    const lab = { 'x-memory-token': 'lab-admin' };
    const c = await rawClient(graphqlUrl.replace(/^http/, 'ws'));
    try {
      c.send({ type: 'connection_init', payload: { 'X-Memory-Token': 'lab-admin' } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({
        id: 'lab',
        type: 'subscribe',
        payload: { query: 'subscription { volumeChanged(filter: { backends: ["lab"] }) { type volumeId } }' },
      });
      expect((await c.nextFor('lab')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      const list = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...lab },
        body: JSON.stringify({ query: '{ volumes(filter: { backends: ["lab"] }) { nodes { id name } } }' }),
      });
      const scratch = (
        (await list.json()) as { data: { volumes: { nodes: Array<{ id: string; name: string }> } } }
      ).data.volumes.nodes.find((v) => v.name === 'scratch')!;

      const caller = callerTrace();
      const res = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: caller.traceparent, ...lab },
        body: JSON.stringify({
          query:
            'mutation Attach($v: ID!) { attachVolume(input: { volumeId: $v, target: { host: { connector: { host: "web-9" } } } }) { operation { id } } }',
          variables: { v: scratch.id },
        }),
      });
      expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
      // The memory backend's watcher sees ATTACHING while the attach runs, before the domain tells
      // the feed what it accepted; ATTACHED comes once the change finishes.
      const attached = await c.next(
        15_000,
        (m) => m.id === 'lab' && m.payload?.data?.volumeChanged?.type === 'ATTACHED',
      );
      expect(attached.payload.data.volumeChanged.volumeId).toBe(scratch.id);

      await until(
        () =>
          spansOf(caller.traceId).some((s) => s.kind === SERVER) &&
          receiver.spans.some((s) => s.name === 'deliver ATTACHED'),
        'the mutation and delivery spans',
        20_000,
      );
      const mutation = spansOf(caller.traceId).find((s) => s.kind === SERVER)!;
      expect(mutation.name).toBe('mutation Attach');
      const delivery = receiver.spans.find((s) => s.name === 'deliver ATTACHED')!;
      // A trace of its own (deliveries are sampled as roots), linked to the mutation that caused it.
      expect(delivery.traceId).not.toBe(caller.traceId);
      expect(delivery.parentSpanId).toBeUndefined();
      expect(delivery.links).toEqual([{ traceId: caller.traceId, spanId: mutation.spanId }]);
      expect(attr(delivery, 'gateway.backend.id')).toBe('lab');
      expect(attr(delivery, 'gateway.event.type')).toBe('ATTACHED');
    } finally {
      c.ws.close();
    }
  }, 30_000);

  it('should link the delivery spans of a volume event to the extend that caused it (any tracked volume mutation, not only attach/detach)', async () => {
    const lab = { 'x-memory-token': 'lab-admin' };
    const c = await rawClient(graphqlUrl.replace(/^http/, 'ws'));
    try {
      c.send({ type: 'connection_init', payload: { 'X-Memory-Token': 'lab-admin' } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({
        id: 'ext',
        type: 'subscribe',
        payload: {
          query:
            'subscription { volumeChanged(filter: { backends: ["lab"] }) { type volumeId volume { sizeBytes status } } }',
        },
      });
      expect((await c.nextFor('ext')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      const list = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...lab },
        body: JSON.stringify({ query: '{ volumes(filter: { backends: ["lab"] }) { nodes { id name sizeBytes } } }' }),
      });
      const cache = (
        (await list.json()) as { data: { volumes: { nodes: Array<{ id: string; name: string; sizeBytes: number }> } } }
      ).data.volumes.nodes.find((v) => v.name === 'dev cache')!;
      const newSize = cache.sizeBytes + 1024 ** 3;

      const caller = callerTrace();
      const res = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: caller.traceparent, ...lab },
        body: JSON.stringify({
          query:
            'mutation Extend($v: ID!, $size: SafeInt) { extendVolume(input: { volumeId: $v, newSizeBytes: $size }) { operation { id } } }',
          variables: { v: cache.id, size: newSize },
        }),
      });
      expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
      // The extend finishes after the memory backend's delay: the watcher then reports the new size.
      await c.next(
        15_000,
        (m) =>
          m.id === 'ext' &&
          m.payload?.data?.volumeChanged?.volumeId === cache.id &&
          m.payload.data.volumeChanged.volume?.sizeBytes === newSize &&
          m.payload.data.volumeChanged.volume?.status === 'AVAILABLE',
      );

      const linked = (): OtlpSpan[] =>
        receiver.spans.filter(
          (s) => s.name.startsWith('deliver ') && (s.links ?? []).some((l) => l.traceId === caller.traceId),
        );
      await until(
        () => spansOf(caller.traceId).some((s) => s.kind === SERVER) && linked().length > 0,
        'the mutation span and a delivery span linked to it',
        20_000,
      );
      const mutation = spansOf(caller.traceId).find((s) => s.kind === SERVER)!;
      expect(mutation.name).toBe('mutation Extend');
      for (const d of linked()) {
        expect(d.traceId).not.toBe(caller.traceId);
        expect(d.parentSpanId).toBeUndefined();
        expect(d.links).toEqual([{ traceId: caller.traceId, spanId: mutation.spanId }]);
        expect(attr(d, 'gateway.backend.id')).toBe('lab');
      }
    } finally {
      c.ws.close();
    }
  }, 30_000);

  it('should trace a watcher re-read as a root span with its backend calls, and the delivery of what it found', async () => {
    const c = await rawClient(graphqlUrl.replace(/^http/, 'ws'));
    try {
      c.send({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({
        id: 'east',
        type: 'subscribe',
        payload: { query: 'subscription { volumeChanged(filter: { backends: ["east"] }) { type volumeId } }' },
      });
      expect((await c.nextFor('east')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      claim(sim, ['vol-001'], 'traced-job');
      await c.next(15_000, (m) => m.id === 'east' && m.payload?.data?.volumeChanged?.type === 'CLAIMED');
      await until(() => receiver.spans.some((s) => s.name === 'deliver CLAIMED'), 'the delivery span', 20_000);
      // The re-read that found the claim: a root, and the read of the volume its child.
      const reReads = receiver.spans.filter(
        (s) => s.name === 're-read volumes' && attr(s, 'gateway.backend.id') === 'east',
      );
      expect(reReads.length).toBeGreaterThan(0);
      expect(reReads.every((s) => s.parentSpanId === undefined)).toBe(true);
      const reads = receiver.spans.filter(
        (s) =>
          s.kind === CLIENT && s.name === 'GET /v1/volume/csi/:id' && reReads.some((r) => r.spanId === s.parentSpanId),
      );
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((s) => s.traceId === reReads.find((r) => r.spanId === s.parentSpanId)!.traceId)).toBe(true);
      // Nothing caused it but the scheduler: a root delivery with no link.
      const delivery = receiver.spans.find((s) => s.name === 'deliver CLAIMED')!;
      expect(delivery.parentSpanId).toBeUndefined();
      expect(delivery.links ?? []).toEqual([]);
      expect(attr(delivery, 'gateway.subscribers')).toBe(1);
    } finally {
      c.ws.close();
    }
  }, 30_000);

  it('should trace an OpenStack watcher poll as a root span with its backend calls as children', async () => {
    const c = await rawClient(graphqlUrl.replace(/^http/, 'ws'));
    try {
      c.send({ type: 'connection_init', payload: { 'X-Auth-Token': os.demoToken } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({
        id: 'os',
        type: 'subscribe',
        payload: { query: 'subscription { volumeChanged(filter: { backends: ["os"] }) { type } }' },
      });
      expect((await c.nextFor('os')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      const polled = (): OtlpSpan[] =>
        receiver.spans.filter((s) => s.name === 'poll volumes' && attr(s, 'gateway.backend.id') === 'os');
      const childrenOf = (p: OtlpSpan): OtlpSpan[] =>
        receiver.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === p.spanId && s.traceId === p.traceId);
      await until(
        () => polled().some((p) => childrenOf(p).some((s) => s.name === 'GET /volumes/detail')),
        'a poll span with its Cinder list',
        20_000,
      );
      const poll = polled().find((p) => childrenOf(p).some((s) => s.name === 'GET /volumes/detail'))!;
      expect(poll.parentSpanId).toBeUndefined();
      for (const s of childrenOf(poll)) expect(attr(s, 'gateway.backend.id')).toBe('os');
    } finally {
      c.ws.close();
    }
  }, 30_000);
});
