/**
 * One Apollo plugin for what operators see per GraphQL request: a structured log line (request
 * id, operation, outcome, error codes, duration) and the operation metrics. Variables and headers
 * are never logged: they may carry secrets and tokens.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import type { GatewayContext } from './context';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';

/** Distinct operation names kept as metric labels; later names count as `other`. */
const MAX_OPERATION_LABELS = 200;

export function observabilityPlugin(logger: Logger, metrics: GatewayMetrics): ApolloServerPlugin<GatewayContext> {
  const seen = new Set<string>();
  // Client-chosen names must not blow up label cardinality.
  const label = (name: string | null | undefined): string => {
    if (!name) return 'anonymous';
    if (!/^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(name)) return 'invalid';
    if (seen.has(name)) return name;
    if (seen.size >= MAX_OPERATION_LABELS) return 'other';
    seen.add(name);
    return name;
  };
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse(rc) {
          const seconds = (performance.now() - started) / 1000;
          const body = rc.response.body.kind === 'single' ? rc.response.body.singleResult : undefined;
          const errors = body?.errors ?? [];
          // Partial: some data came back beside the errors (e.g. one backend of a list failed).
          const hasData = Object.values(body?.data ?? {}).some((v) => v !== null);
          const outcome = errors.length === 0 ? 'success' : hasData ? 'partial' : 'error';
          const operation = label(rc.operationName ?? rc.operation?.name?.value);
          const type = rc.operation?.operation ?? 'unknown';
          metrics.recordOperation(operation, type, outcome, seconds);
          logger.info(
            {
              requestId: rc.contextValue.requestId,
              operation,
              type,
              outcome,
              errorCodes: errors.length > 0 ? [...new Set(errors.map((e) => String(e.extensions?.code ?? 'UNKNOWN')))] : undefined,
              durationMs: Math.round(seconds * 100_000) / 100,
            },
            'graphql request',
          );
        },
      };
    },
  };
}
