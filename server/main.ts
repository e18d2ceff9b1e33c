#!/usr/bin/env node
/**
 * CLI entry: `volume-gateway [--config FILE]`. With no backends configured it starts embedded
 * simulated backends with demo data (demo mode).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from './app';
import { createRegistry } from './backends';
import { loadConfig } from './config';
import { ConfigError } from '../adapters/contract/settings';
import type { DemoBackends } from './demo';
import { turnOffV8CompilationCache } from './execution/compiled';
import { helpText } from './help';
import { chooseLogFormat, createLogger } from './logger';
import { reportDroppedLines, StdoutLog } from './log-stdout';
import { GatewayMetrics } from './metrics';
import { packageRoot } from './package-root';
import { LOG_EXIT_FLUSH_MS, stopDeadlineMs, TELEMETRY_EXIT_FLUSH_MS } from './shutdown-timing';
import { startTracing } from './tracing';
import { startMetricsExport } from './otlp-metrics';

function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<void> {
  let configPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') return void console.log(helpText());
    if (a === '--version' || a === '-v') return void console.log(version());
    if (a === '--config') configPath = argv[++i];
    else if (a.startsWith('--config=')) configPath = a.slice('--config='.length);
    else throw new ConfigError('arguments', `unknown argument ${JSON.stringify(a)} (see --help)`);
    if (configPath === undefined || configPath === '') throw new ConfigError('--config', 'needs a file path');
  }
  const config = loadConfig(process.env, configPath);
  // V8 would keep every compiled document's code, the budget's evicted ones included.
  if (config.executionEngine === 'compiled') turnOffV8CompilationCache();
  const metrics = new GatewayMetrics();
  const log = new StdoutLog(config.logMaxBufferBytes, () => metrics.logLinesDropped.inc());
  // Every exit, the backstop's and a crash's too: what stdout has not taken is dropped and
  // counted on stderr, never waited for (a stalled reader must not hold the process).
  process.on('exit', () => reportDroppedLines(log.close()));
  const logFormat = chooseLogFormat(config.logFormat, {
    tty: process.stdout.isTTY === true,
    demo: config.backends.length === 0,
  });
  const logger = createLogger(config.logLevel, log, logFormat);
  // Before anything serves; off (and the SDK not loaded) without the OTEL_* variables.
  const tracing = startTracing(process.env, logger, version());
  // Off (and its SDK not loaded) unless OTEL_METRICS_EXPORTER names otlp; /metrics is served either way.
  const metricsExport = startMetricsExport(process.env, metrics.registry, logger, version());
  let demo: DemoBackends | undefined;
  let exposed: string | undefined;
  // loadConfig refuses an empty backend list under NODE_ENV=production, so this is the demo.
  if (config.backends.length === 0) {
    // Loaded only in demo mode: a configured gateway never loads the simulators.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
    const { startDemoBackends, demoExposureWarning } = require('./demo') as typeof import('./demo');
    demo = await startDemoBackends();
    config.backends = demo.backends;
    exposed = demoExposureWarning(config.host);
  }
  const registry = createRegistry(
    config.backends,
    (r) => {
      metrics.recordCall(r);
      logger.debug(r, 'backend call');
    },
    { breaker: config.resilience.breaker, listBackendDeadlineMs: config.resilience.listBackendDeadlineMs },
  );
  const gateway: RunningGateway = await startGateway({
    config: { ...config, readiness: config.resilience.readiness },
    registry,
    logger,
    metrics,
    ...(demo
      ? {
          graphiql: { defaultHeaders: demo.graphiqlHeaders },
          livePage: { defaultHeaders: demo.headers },
          loopbackOrigins: true,
        }
      : {}),
  });
  // A stray rejection is a bug to log, not a reason to drop every in-flight request.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  let stopping = false;
  /** Ends the drain period early: a second signal means "stop now". */
  let endDrain: (() => void) | undefined;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return void endDrain?.();
    stopping = true;
    // SIGTERM (orchestrators, load balancers) drains first: /readyz answers 503 while requests are
    // still served, so the replica is taken out before it stops accepting. Ctrl-C stops at once.
    if (signal === 'SIGTERM' && config.shutdownDrainMs > 0) {
      logger.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: readiness answers 503');
      gateway.drain();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, config.shutdownDrainMs);
        endDrain = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    logger.info({ signal }, 'shutting down');
    // Backstop: every step of stop() is bounded (sockets closing with 1012 by WS_CLOSE_WAIT_MS,
    // the server's drain by the grace period, backend pools by a short drain), but a shutdown
    // must end even if some future step is not.
    const force = setTimeout(() => {
      logger.error({ signal, graceMs: config.shutdownGraceMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, stopDeadlineMs(config.shutdownGraceMs));
    force.unref();
    await gateway.stop();
    await demo?.stop();
    // Last: the spans of the drained requests, and the metrics as they end, are exported before the
    // process exits, within a bound: an unreachable collector must not hold the exit.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([tracing?.shutdown(), metricsExport?.shutdown()]),
      new Promise((resolve) => (bound = setTimeout(resolve, TELEMETRY_EXIT_FLUSH_MS))),
    ]);
    clearTimeout(bound);
    // Stdout gets a moment for the last lines; a reader still stalled then loses them (counted).
    await log.flush(LOG_EXIT_FLUSH_MS);
    process.exit(0);
  };
  // Before the gateway says it is ready: a SIGTERM with no listener would kill it outright.
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // With TLS, SIGHUP re-reads the certificate files (it logs the outcome; a failure keeps the old ones).
  if (gateway.reloadCertificates) process.on('SIGHUP', () => void gateway.reloadCertificates!());
  logger.info(
    { url: gateway.url, backends: config.backends.map((b) => ({ id: b.id, kind: b.kind, url: b.url })) },
    'gateway started',
  );
  // The banner through the log's own queue: in order with the log lines before it, and never
  // waiting on a stalled stdout either.
  const say = (line: string): void => void log.write(`${line}\n`);
  say(`Volume gateway ready at ${gateway.url}`);
  say(`Live status page at ${gateway.url.replace(/\/graphql$/, '/live')}`);
  if (gateway.managementUrl) say(`Health and metrics at ${gateway.managementUrl} (/healthz, /readyz, /metrics)`);
  if (demo) {
    for (const line of demo.banner) say(line);
    if (exposed) {
      logger.warn({ host: config.host }, exposed);
      console.warn(exposed);
    }
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(`volume-gateway: configuration error: ${err.message}`);
    process.exit(2);
  }
  console.error('volume-gateway: failed to start:', err);
  process.exit(1);
});
