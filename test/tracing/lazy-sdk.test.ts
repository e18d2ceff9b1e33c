/**
 * Tracing off costs nothing (issue 19, settled point): without OTEL_TRACES_EXPORTER or an OTLP
 * endpoint the gateway never loads an OpenTelemetry SDK or exporter module; nor the metrics SDK
 * without OTEL_METRICS_EXPORTER=otlp (issue 31). The gateway runs as its
 * own process; a preloaded script reports on SIGUSR2, once the gateway serves, which loaded modules
 * are the SDK's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from '../support/gateway-process';
import { until } from '../support/until';

const work = mkdtempSync(join(tmpdir(), 'otel-lazy-'));
const hook = join(work, 'report-sdk.cjs');
writeFileSync(
  hook,
  `process.on('SIGUSR2', () => process.stderr.write('sdk modules: ' + JSON.stringify(Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-|exporter-|resources|otlp-)/.test(k))) + '\\n'));\n`,
);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Starts server/main.ts with `env`, waits for it to serve, asks for the report, stops it, and returns the SDK modules it had loaded. */
async function sdkModulesLoaded(env: Record<string, string>): Promise<string[]> {
  const gateway = startGatewayProcess(
    { LOG_LEVEL: 'warn', GATEWAY_BACKENDS: 'lab=memory', ...env },
    { withoutInheritedOtel: true, nodeArgs: ['--require', hook] },
  );
  const { child } = gateway;
  try {
    await until(() => /ready at /.test(gateway.output()) || child.exitCode !== null, 'the gateway to serve', 60_000);
    expect({ exitCode: child.exitCode, err: child.exitCode === null ? '' : gateway.errors() }).toEqual({
      exitCode: null,
      err: '',
    });
    child.kill('SIGUSR2');
    await until(() => /sdk modules: (.*)\n/.test(gateway.errors()), 'the report', 20_000);
  } finally {
    await gateway.stop();
  }
  const report = /sdk modules: (.*)\n/.exec(gateway.errors());
  return JSON.parse(report![1]!) as string[];
}

describe('tracing off by default', () => {
  it('should load no OpenTelemetry SDK or exporter module without the OTEL_* variables', async () => {
    expect(await sdkModulesLoaded({})).toEqual([]);
  }, 90_000);

  it('should load the SDK when OTEL_TRACES_EXPORTER is set (the report sees it)', async () => {
    const loaded = await sdkModulesLoaded({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(loaded.some((k) => k.includes('sdk-trace-node'))).toBe(true);
    // Tracing alone loads no metrics exporter (the trace exporters' OTLP serializer requires sdk-metrics itself).
    expect(loaded.filter((k) => /exporter-metrics/.test(k))).toEqual([]);
  }, 90_000);

  it('should load the metrics SDK and exporter only when OTEL_METRICS_EXPORTER=otlp is set, and no tracing SDK then', async () => {
    const loaded = await sdkModulesLoaded({
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:9/v1/metrics',
    });
    expect(loaded.some((k) => k.includes('sdk-metrics'))).toBe(true);
    expect(loaded.some((k) => k.includes('exporter-metrics-otlp-http'))).toBe(true);
    expect(loaded.filter((k) => /sdk-trace|exporter-trace/.test(k))).toEqual([]);
  }, 90_000);
});
