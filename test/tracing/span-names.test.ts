/**
 * Span names in one style, and the phases of an operation (issue 31, part 5; docs/tracing.md, "What
 * is traced"). The gateway runs as a child process exporting to a real OTLP/HTTP receiver, with a
 * Nomad and an OpenStack simulator and background traces on, so that one run makes every kind of
 * span: requests, backend calls (version documents and Cinder actions among them), probes, watcher
 * reads, deliveries. Every name seen then follows OpenTelemetry's conventions: `{method}
 * {url.template}` for backend calls, `{operation.type} {operation.name}` for operations, and
 * `{operation} {target}` (one lower-case word, then at most one more) for the gateway's own.
 * A query's SERVER span has `parse`, `validate` and `execute` children on graphql-js, and an
 * `execute` child when its document runs compiled (graphql-jit).
 */
import { randomBytes } from 'node:crypto';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, MGMT, seedVolumes, startNomad, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { attr, CLIENT, SERVER, type OtlpSpan } from '../support/otlp-receiver';
import { until } from '../support/until';
import { claim, rawClient } from '../ws/helpers';
import { startTracedGateway, type TracedGateway } from './traced-gateway';

let sim: NomadSimulator;
let os: OpenStackUnderTest;
let traced: TracedGateway;
let url: string;
const spans = (): OtlpSpan[] => traced.spans();

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 2);
  os = await startOpenStack({ delays: { extendMs: 30 } });
  traced = await startTracedGateway(sim, os, { OTEL_TRACES_BACKGROUND_SAMPLE_RATIO: '1' });
  url = traced.url;
}, 90_000);

afterAll(async () => {
  await traced?.stop();
  await disposeAll();
});

/** Posts `query` in a trace of its own; answers the data and that trace's id. */
async function ask(
  query: string,
  headers: Record<string, string>,
  variables?: Record<string, unknown>,
): Promise<{ data: any; traceId: string }> {
  const traceId = randomBytes(16).toString('hex');
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: unknown; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return { data: body.data, traceId };
}

/** The operation's SERVER span of `traceId` and the names of its INTERNAL children, sorted. */
async function phasesOf(traceId: string): Promise<{ op: OtlpSpan; phases: string[] }> {
  await until(() => spans().some((s) => s.traceId === traceId && s.kind === SERVER), 'the operation span', 20_000);
  const op = spans().find((s) => s.traceId === traceId && s.kind === SERVER)!;
  // Phase spans end before the operation's, so they are in the same or an earlier export.
  const phases = spans()
    .filter((s) => s.traceId === traceId && s.parentSpanId === op.spanId && s.kind !== CLIENT)
    .map((s) => s.name)
    .sort();
  return { op, phases };
}

describe('operation phases', () => {
  it('should give a query parse, validate and execute spans under its span on graphql-js, and an execute span when compiled', async () => {
    const query = 'query Phases { volumes(filter: { backends: ["east"] }) { nodes { id } } }';
    const first = await ask(query, { 'x-nomad-token': MGMT });
    expect(await phasesOf(first.traceId)).toMatchObject({
      op: { name: 'query Phases' },
      phases: ['execute', 'parse', 'validate'],
    });
    // The second sighting runs compiled; Apollo's store has the document parsed and validated already.
    const second = await ask(query, { 'x-nomad-token': MGMT });
    expect((await phasesOf(second.traceId)).phases).toEqual(['execute']);
    const metrics = await (await fetch(url.replace(/\/graphql$/, '/metrics'))).text();
    expect(metrics).toMatch(/^gateway_executions_total\{engine="compiled",reason="none"\} [1-9]/m);
  }, 30_000);
});

describe('span names', () => {
  it('should name every span of a run in one style', async () => {
    // Operations, Cinder calls (a version document, an action), a subscription and its deliveries.
    const c = await rawClient(url.replace(/^http/, 'ws'));
    try {
      c.send({ type: 'connection_init', payload: { 'X-Nomad-Token': MGMT, 'X-Auth-Token': os.demoToken } });
      expect((await c.next()).type).toBe('connection_ack');
      c.send({ id: 'all', type: 'subscribe', payload: { query: 'subscription Changes { volumeChanged { type } }' } });
      expect((await c.nextFor('all')).payload.data.volumeChanged.type).toBe('SUBSCRIBED');
      const native = os.sim.seedVolume({ project: os.demo, name: 'named', size: 1 });
      const found = await ask(
        `query Find($n: String!) { volumeByNativeId(backend: "os", nativeId: $n) { id } }`,
        { 'x-auth-token': os.demoToken },
        { n: native },
      );
      await ask(
        'mutation Grow($i: ExtendVolumeInput!) { extendVolume(input: $i) { operation { id } } }',
        { 'x-auth-token': os.demoToken },
        { i: { volumeId: found.data.volumeByNativeId.id, newSizeGiB: 2 } },
      );
      claim(sim, ['vol-001'], 'named-job');
      await c.next(15_000, (m) => m.id === 'all' && m.payload?.data?.volumeChanged?.type === 'CLAIMED');
    } finally {
      c.ws.close();
    }
    const kinds = (): Set<string> => new Set(spans().map((s) => s.name));
    await until(
      () =>
        ['deliver CLAIMED', 'mutation Grow', 'probe backend', 'poll volumes', 're-read volumes'].every((n) =>
          kinds().has(n),
        ),
      'spans of every kind',
      20_000,
    );
    const all = spans();
    const names = [...new Set(all.map((s) => `${s.kind} ${s.name}`))].sort();
    // The run made the calls whose names were out of style before.
    expect(names).toEqual(expect.arrayContaining([`${CLIENT} GET /v3/`, `${CLIENT} POST /volumes/:id/action`]));
    const offStyle = all.filter((s) => {
      if (s.kind === CLIENT)
        return (
          !/^(GET|HEAD|POST|PUT|PATCH|DELETE) \/\S*$/.test(s.name) ||
          s.name !== `${String(attr(s, 'http.request.method'))} ${String(attr(s, 'url.template'))}`
        );
      if (s.kind === SERVER) return !/^(query|mutation|subscription)( [_A-Za-z][_0-9A-Za-z]*)?$/.test(s.name);
      return !/^[a-z][a-z-]*( [A-Za-z_][A-Za-z0-9_]*)?$/.test(s.name);
    });
    expect([...new Set(offStyle.map((s) => s.name))]).toEqual([]);
    // The action word the name leaves out is kept, as the metrics' endpoint label has it.
    const action = all.find((s) => s.name === 'POST /volumes/:id/action')!;
    expect(attr(action, 'gateway.backend.endpoint')).toBe('POST /volumes/:id/action os-extend');
  }, 60_000);
});
