/**
 * prom-client's registry as an OpenTelemetry metric producer: at each export it reads the registry
 * (`getMetricsAsJSON()`, which runs the gauges' collect functions as a scrape does) and hands the
 * SDK the same series `/metrics` shows, under the same names and labels (as string attributes):
 * counters as monotonic cumulative sums, gauges as gauges, histograms as explicit-bucket
 * histograms (prom-client's cumulative `le` buckets made per-bucket counts). Summaries would be
 * left out: the registry has none. Loaded with the metrics SDK only.
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { hrTime, millisToHrTime } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import type { Registry } from 'prom-client';

/** One registry entry as `getMetricsAsJSON()` gives it. */
type PromMetric = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type PromValue = PromMetric['values'][number] & { metricName?: string };

/** The instrumentation scope of the bridged metrics. */
const SCOPE = { name: 'volume-gateway/prom-client' };

/** prom-client label values (strings, sometimes numbers) as attributes, without `le`. */
function attributesOf(labels: Record<string, string | number | undefined>): Attributes {
  const a: Attributes = {};
  for (const [k, v] of Object.entries(labels)) if (k !== 'le' && v !== undefined) a[k] = String(v);
  return a;
}

/** A histogram's series, one per label set: its buckets, sum and count rebuilt. */
function histogramPoints(m: PromMetric, startTime: HrTime, endTime: HrTime): DataPoint<Histogram>[] {
  const series = new Map<string, { attributes: Attributes; le: Array<[number, number]>; sum: number; count: number }>();
  for (const v of m.values as PromValue[]) {
    const attributes = attributesOf(v.labels);
    const key = JSON.stringify(Object.entries(attributes).sort());
    let s = series.get(key);
    if (!s) series.set(key, (s = { attributes, le: [], sum: 0, count: 0 }));
    if (v.metricName === `${m.name}_sum`) s.sum = v.value;
    else if (v.metricName === `${m.name}_count`) s.count = v.value;
    else if (v.labels.le !== '+Inf') s.le.push([Number(v.labels.le), v.value]);
  }
  return [...series.values()].map((s) => {
    const le = s.le.sort((a, b) => a[0] - b[0]);
    // Cumulative to per bucket; the last bucket (above every bound) takes what the count adds.
    const counts = le.map(([, c], i) => c - (i > 0 ? le[i - 1]![1] : 0));
    counts.push(s.count - (le.at(-1)?.[1] ?? 0));
    return {
      startTime,
      endTime,
      attributes: s.attributes,
      value: { buckets: { boundaries: le.map(([b]) => b), counts }, sum: s.sum, count: s.count },
    };
  });
}

/** One registry entry as the SDK's metric data; undefined for a summary or a series-less metric. */
function toMetricData(m: PromMetric, startTime: HrTime, endTime: HrTime): MetricData | undefined {
  if (m.values.length === 0) return undefined;
  const descriptor = { name: m.name, description: m.help, unit: '', valueType: ValueType.DOUBLE };
  const aggregationTemporality = AggregationTemporality.CUMULATIVE;
  const points = (): DataPoint<number>[] =>
    m.values.map((v) => ({ startTime, endTime, attributes: attributesOf(v.labels), value: v.value }));
  switch (m.type as unknown as string) {
    case 'counter':
      return {
        descriptor,
        aggregationTemporality,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: points(),
      };
    case 'gauge':
      return { descriptor, aggregationTemporality, dataPointType: DataPointType.GAUGE, dataPoints: points() };
    case 'histogram':
      return {
        descriptor,
        aggregationTemporality,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramPoints(m, startTime, endTime),
      };
    default:
      return undefined;
  }
}

/** The producer; the registry's counters count from `startedAtMs` (the process's start). */
export function promClientProducer(registry: Registry, resource: Resource, startedAtMs: number): MetricProducer {
  const startTime = millisToHrTime(startedAtMs);
  return {
    async collect(): Promise<CollectionResult> {
      const endTime = hrTime();
      const metrics = (await registry.getMetricsAsJSON())
        .map((m) => toMetricData(m, startTime, endTime))
        .filter((m): m is MetricData => m !== undefined);
      return {
        resourceMetrics: { resource, scopeMetrics: [{ scope: SCOPE, metrics }] },
        errors: [],
      };
    },
  };
}
