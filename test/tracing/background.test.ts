/**
 * Background work is sampled apart (issue 31, part 5; docs/tracing.md, "Sampling"): readiness
 * probes and watcher reads are no caller's request, and by default make no trace at all, while
 * callers' requests still do. `OTEL_TRACES_BACKGROUND_SAMPLE_RATIO=1` brings them back, each probe
 * and each poll a root span with its backend calls as children. Two gateways side by side (child
 * processes with the standard OTEL_* variables), each exporting to its own real OTLP/HTTP receiver,
 * with a Nomad and an OpenStack simulator, probes every 200 ms and an OpenStack watcher polling.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, MGMT, seedVolumes, startNomad, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { attr, CLIENT, SERVER, type OtlpSpan } from '../support/otlp-receiver';
import { until } from '../support/until';
import { rawClient, type RawClient } from '../ws/helpers';
import { startTracedGateway, type TracedGateway } from './traced-gateway';

let sim: NomadSimulator;
let os: OpenStackUnderTest;

/** A gateway with an OpenStack subscriber (so its watcher polls). */
type Traced = TracedGateway & { subscriber?: RawClient };

/** Opens a graphql-ws subscription to OpenStack's changes: its watcher polls while it is open. */
async function subscribeToOpenStack(t: Traced): Promise<void> {
  const c = await rawClient(t.url.replace(/^http/, 'ws'));
  t.subscriber = c;
  c.send({ type: 'connection_init', payload: { 'X-Auth-Token': os.demoToken } });
  expect((await c.next()).type).toBe('connection_ack');
  c.send({ id: 'os', type: 'subscribe', payload: { query: 'subscription { volumeChanged { type } }' } });
  expect((await c.nextFor('os')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
}

/** A named query, whose SERVER span shows that the gateway's exports reach the receiver. */
async function ask(t: Traced, name: string): Promise<void> {
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-nomad-token': MGMT },
    body: JSON.stringify({ query: `query ${name} { volumes(filter: { backends: ["east"] }) { nodes { id } } }` }),
  });
  expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
  await until(() => t.spans().some((s) => s.name === `query ${name}`), `the span of ${name}`, 20_000);
}

/** Root spans that no caller's request (a SERVER span) or event delivery began. */
const backgroundRoots = (spans: OtlpSpan[]): OtlpSpan[] =>
  spans.filter((s) => s.parentSpanId === undefined && s.kind !== SERVER && !s.name.startsWith('deliver '));

let off: Traced;
let on: Traced;

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 2);
  os = await startOpenStack();
  [off, on] = await Promise.all([
    startTracedGateway(sim, os),
    startTracedGateway(sim, os, { OTEL_TRACES_BACKGROUND_SAMPLE_RATIO: '1' }),
  ]);
  await Promise.all([subscribeToOpenStack(off), subscribeToOpenStack(on)]);
}, 90_000);

afterAll(async () => {
  for (const t of [off, on]) {
    t?.subscriber?.ws.close();
    await t?.stop();
  }
  await disposeAll();
});

describe('background traces', () => {
  it('should make no background root span by default while probes run and the watcher polls, and still trace requests', async () => {
    // Idle: a few seconds of probes (every 200 ms) and polls (every 100-200 ms).
    await new Promise((r) => setTimeout(r, 3_000));
    await ask(off, 'AfterIdle');
    const roots = backgroundRoots(off.spans());
    expect(roots.map((s) => s.name)).toEqual([]);
    // No backend call outside a caller's trace either: every CLIENT span has a parent.
    expect(off.spans().filter((s) => s.kind === CLIENT && s.parentSpanId === undefined)).toEqual([]);
    // The probes did run: /readyz shows each backend probed.
    const ready = (await (await fetch(off.url.replace(/\/graphql$/, '/readyz'))).json()) as {
      backends: Array<{ id: string; checkedAt: string | null }>;
    };
    expect(ready.backends.map((b) => [b.id, b.checkedAt !== null])).toEqual([
      ['east', true],
      ['os', true],
    ]);
  }, 30_000);

  it('should trace probes and polls as root spans with their backend calls when OTEL_TRACES_BACKGROUND_SAMPLE_RATIO=1', async () => {
    const childrenOf = (p: OtlpSpan): OtlpSpan[] =>
      on.spans().filter((s) => s.kind === CLIENT && s.parentSpanId === p.spanId && s.traceId === p.traceId);
    const rootsNamed = (name: string, backend: string): OtlpSpan[] =>
      backgroundRoots(on.spans()).filter((s) => s.name === name && attr(s, 'gateway.backend.id') === backend);
    await until(
      () =>
        ['east', 'os'].every((b) => rootsNamed('probe backend', b).some((p) => childrenOf(p).length > 0)) &&
        rootsNamed('poll volumes', 'os').some((p) => childrenOf(p).some((s) => s.name === 'GET /volumes/detail')),
      'probe and poll spans with their backend calls',
      20_000,
    );
    for (const p of [...rootsNamed('probe backend', 'east'), ...rootsNamed('probe backend', 'os')])
      for (const c of childrenOf(p)) expect(attr(c, 'gateway.backend.id')).toBe(attr(p, 'gateway.backend.id'));
    // Requests are traced as before.
    await ask(on, 'BesideTheProbes');
  }, 30_000);
});
