/**
 * How long a gateway takes to exit after SIGTERM, at most: the drain (`SHUTDOWN_DRAIN_MS`), then
 * stop() (sockets and streams closing, then in-flight requests for `SHUTDOWN_GRACE_MS`), then the
 * backstop for the steps after. An orchestrator's kill timeout (Kubernetes
 * `terminationGracePeriodSeconds`, Nomad `KillTimeout`) must exceed {@link shutdownBoundMs}
 * (test/deploy/manifests.test.ts checks deploy/ against it).
 */

/** Longest wait for sockets to answer the shutdown's close frame before they are cut (before the HTTP drain). */
export const WS_CLOSE_WAIT_MS = 2_000;

/** At exit, the longest wait for stdout to take the log lines still pending (server/log-stdout.ts); one of the steps the backstop covers. */
export const LOG_EXIT_FLUSH_MS = 1_000;

/**
 * At exit, the longest wait for the last spans and metrics to be exported (an unreachable collector
 * makes the OTLP exporters retry for seconds); one of the steps the backstop covers.
 */
export const TELEMETRY_EXIT_FLUSH_MS = 2_000;

/** Time after the grace period for the steps after the drain (pools, Redis, the log's last lines) before exiting anyway. */
export const SHUTDOWN_BACKSTOP_MS = 5_000;

/** From the end of the drain: when server/main.ts exits anyway (exit code 1) if stop() has not finished. */
export function stopDeadlineMs(shutdownGraceMs: number): number {
  return WS_CLOSE_WAIT_MS + shutdownGraceMs + SHUTDOWN_BACKSTOP_MS;
}

/** From SIGTERM: the latest a gateway with these settings exits. */
export function shutdownBoundMs(c: { shutdownDrainMs: number; shutdownGraceMs: number }): number {
  return c.shutdownDrainMs + stopDeadlineMs(c.shutdownGraceMs);
}
