/**
 * OTLP metrics next to Prometheus (issue 31, part 5; docs/tracing.md, "Metrics over OTLP"): with
 * `OTEL_METRICS_EXPORTER=otlp` the gateway, a child process, pushes the registry `/metrics` serves
 * to a real OTLP/HTTP receiver (`POST /v1/metrics`, JSON), every `OTEL_METRIC_EXPORT_INTERVAL`. The
 * last export before a scrape of `/metrics`, with no request between them, has the same metric
 * families, kinds, series and values: counters as monotonic sums, gauges as gauges, histograms with
 * the same buckets, sum and count. And once more at SIGTERM. (Without the variable the SDK is not
 * loaded: test/tracing/lazy-sdk.test.ts.)
 */
import { startGatewayProcess } from '../support/gateway-process';
import { metricsIn, startOtlpReceiver, type OtlpMetric, type OtlpReceiver } from '../support/otlp-receiver';
import { until } from '../support/until';
import { ConfigError } from '../../adapters/contract/settings';
import { readMetricsExportSettings } from '../../server/otlp-metrics/settings';

let otlp: OtlpReceiver;
let gateway: ReturnType<typeof startGatewayProcess>;
let url: string;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  gateway = startGatewayProcess(
    {
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: 'lab=memory',
      OTEL_METRICS_EXPORTER: 'otlp',
      // The per-signal endpoint: no OTEL_EXPORTER_OTLP_ENDPOINT, so tracing stays off.
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${otlp.url}/v1/metrics`,
      OTEL_METRIC_EXPORT_INTERVAL: '300',
    },
    { withoutInheritedOtel: true },
  );
  url = await gateway.serving();
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  otlp?.close();
});

/** A Prometheus text exposition as `name{sorted labels}` → value, and each family's type (only families with samples). */
function parseExposition(text: string): { samples: Map<string, number>; families: Map<string, string> } {
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]): [string, string] => [
      k!,
      k === 'le' ? String(Number(v === '+Inf' ? Infinity : v)) : v!,
    ]);
    samples.set(seriesKey(m[1]!, Object.fromEntries(labels)), Number(m[3]));
    const family = types.has(m[1]!) ? m[1]! : m[1]!.replace(/_(bucket|sum|count)$/, '');
    families.set(family, types.get(family)!);
  }
  return { samples, families };
}

const seriesKey = (name: string, labels: Record<string, string>): string =>
  `${name}{${Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;

/** An OTLP metric as the Prometheus samples it stands for (histogram buckets made cumulative again). */
function asSamples(m: OtlpMetric): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of m.points) {
    if (m.kind !== 'histogram') {
      out.set(seriesKey(m.name, p.attributes), p.value!);
      continue;
    }
    let cumulative = 0;
    p.bucketCounts!.forEach((c, i) => {
      cumulative += c;
      const le = String(i < p.bounds!.length ? p.bounds![i] : Infinity);
      out.set(seriesKey(`${m.name}_bucket`, { ...p.attributes, le }), cumulative);
    });
    out.set(seriesKey(`${m.name}_sum`, p.attributes), p.sum!);
    out.set(seriesKey(`${m.name}_count`, p.attributes), p.count!);
  }
  return out;
}

const KIND_OF_TYPE: Record<string, OtlpMetric['kind']> = { counter: 'sum', gauge: 'gauge', histogram: 'histogram' };

describe('OTLP metrics export', () => {
  it("should push /metrics' families, series and values over OTLP", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-memory-token': 'lab-admin' },
        body: JSON.stringify({ query: 'query Counted { storageBackends { id } }' }),
      });
      expect(res.status).toBe(200);
    }
    const operations = (m: OtlpMetric[]): number =>
      m.find((x) => x.name === 'gateway_graphql_operations_total')?.points.reduce((s, p) => s + p.value!, 0) ?? 0;
    await until(
      () => otlp.metrics.some((r) => operations(metricsIn(r)) === 5),
      'an export with the 5 operations',
      20_000,
    );
    // One export more, wholly after the requests; then the scrape, with nothing in between.
    const seen = otlp.metrics.length;
    await until(() => otlp.metrics.length > seen, 'the next export', 20_000);
    const exported = metricsIn(otlp.metrics.at(-1)!);
    const scraped = parseExposition(await (await fetch(url.replace(/\/graphql$/, '/metrics'))).text());

    expect(exported.map((m) => m.name).sort()).toEqual([...scraped.families.keys()].sort());
    for (const m of exported) {
      expect({ name: m.name, kind: m.kind }).toEqual({
        name: m.name,
        kind: KIND_OF_TYPE[scraped.families.get(m.name)!],
      });
      if (m.kind === 'sum') expect(m.monotonic).toBe(true);
    }
    // The gateway's own series, value for value (process and runtime gauges move between two reads).
    const ours = exported.filter((m) => m.name.startsWith('gateway_'));
    expect(ours.map((m) => m.name)).toEqual(
      expect.arrayContaining([
        'gateway_graphql_operations_total',
        'gateway_graphql_operation_duration_seconds',
        'gateway_ws_connections',
      ]),
    );
    for (const m of ours)
      for (const [series, value] of asSamples(m))
        expect({ series, value }).toEqual({ series, value: scraped.samples.get(series) });
    // No backend vouched for the caller, so its operation's name counts as `other` (docs/architecture.md).
    expect(asSamples(exported.find((m) => m.name === 'gateway_graphql_operations_total')!)).toEqual(
      new Map([['gateway_graphql_operations_total{operation="other",outcome="success",type="query"}', 5]]),
    );
  }, 60_000);

  it('should export once more at SIGTERM, before exiting', async () => {
    // Its interval far longer than the test: only the shutdown's export can bring the operation.
    const receiver = await startOtlpReceiver();
    const late = startGatewayProcess(
      {
        LOG_LEVEL: 'warn',
        GATEWAY_BACKENDS: 'lab=memory',
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
        OTEL_METRIC_EXPORT_INTERVAL: '600000',
      },
      { withoutInheritedOtel: true },
    );
    try {
      const lateUrl = await late.serving();
      const res = await fetch(lateUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(res.status).toBe(200);
      expect(receiver.metrics).toHaveLength(0);
      await late.stop();
      expect(late.child.exitCode).toBe(0);
      const last = metricsIn(receiver.metrics.at(-1)!);
      expect(last.find((m) => m.name === 'gateway_graphql_operations_total')?.points.map((p) => p.value)).toEqual([1]);
    } finally {
      if (late.child.exitCode === null) late.child.kill('SIGKILL');
      receiver.close();
    }
  }, 60_000);
});

describe('readMetricsExportSettings', () => {
  it('should be on only when OTEL_METRICS_EXPORTER names otlp, and not with none or OTEL_SDK_DISABLED', () => {
    expect(readMetricsExportSettings({})).toBeNull();
    expect(readMetricsExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeNull();
    expect(readMetricsExportSettings({ OTEL_METRICS_EXPORTER: 'prometheus' })).toBeNull();
    expect(readMetricsExportSettings({ OTEL_METRICS_EXPORTER: 'otlp,none' })).toBeNull();
    expect(readMetricsExportSettings({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(readMetricsExportSettings({ OTEL_METRICS_EXPORTER: ' Prometheus, OTLP ' })).toEqual({
      intervalMs: 60_000,
      timeoutMs: 30_000,
    });
  });

  it('should read the interval and timeout (the timeout at most the interval), and refuse what it cannot use', () => {
    const on = { OTEL_METRICS_EXPORTER: 'otlp' };
    expect(readMetricsExportSettings({ ...on, OTEL_METRIC_EXPORT_INTERVAL: '10000' })).toEqual({
      intervalMs: 10_000,
      timeoutMs: 10_000,
    });
    expect(readMetricsExportSettings({ ...on, OTEL_METRIC_EXPORT_TIMEOUT: '5000' })?.timeoutMs).toBe(5_000);
    expect(readMetricsExportSettings({ ...on, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' })).not.toBeNull();
    expect(() => readMetricsExportSettings({ OTEL_METRICS_EXPORTER: 'console' })).toThrow(ConfigError);
    expect(() => readMetricsExportSettings({ ...on, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' })).toThrow(
      /http\/json only/,
    );
    for (const bad of ['0', '-5', '1.5', 'soon'])
      expect(() => readMetricsExportSettings({ ...on, OTEL_METRIC_EXPORT_INTERVAL: bad })).toThrow(
        /OTEL_METRIC_EXPORT_INTERVAL/,
      );
  });
});
