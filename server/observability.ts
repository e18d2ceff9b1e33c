/**
 * One Apollo plugin for what operators see per GraphQL request: a structured log line (request
 * id, operation, outcome, error codes, duration) and the operation metrics. Variables and headers
 * are never logged: they may carry secrets and tokens.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { errorCodeOf } from '../adapters/contract/graphql-errors';
import type { GatewayContext } from '../domain/context';
import type { TrustedDocuments } from './http/trusted-documents';
import type { Logger } from './logger';
import type { GatewayMetrics, OperationOutcome } from './metrics';
import { OperationLabels, operationName } from './operation-labels';

export interface ObservabilityOptions {
  /** The trusted documents, when on: their operation names always get a label of their own. @default none */
  trustedDocuments?: TrustedDocuments;
}

export function observabilityPlugin(
  logger: Logger,
  metrics: GatewayMetrics,
  o: ObservabilityOptions = {},
): ApolloServerPlugin<GatewayContext> {
  const labels = new OperationLabels();
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
          // A client that hung up: what its operation got says nothing about the backends.
          const outcome: OperationOutcome = rc.contextValue.limits?.clientGone
            ? 'aborted'
            : errors.length === 0
              ? 'success'
              : hasData
                ? 'partial'
                : 'error';
          // Apollo's queryHash is the SHA-256 of the text it ran (a trusted document's own text when on).
          const trusted = rc.queryHash !== undefined && o.trustedDocuments?.hasHash(rc.queryHash) === true;
          const name = rc.operationName ?? rc.operation?.name?.value;
          const type = rc.operation?.operation ?? 'unknown';
          metrics.recordOperation(
            labels.label(name, trusted || rc.contextValue.credentialProof?.proven === true),
            type,
            outcome,
            seconds,
          );
          logger.info(
            {
              requestId: rc.contextValue.requestId,
              // The name itself: a log line costs nothing after it is written, a label does.
              operation: operationName(name),
              type,
              outcome,
              errorCodes: errors.length > 0 ? [...new Set(errors.map(errorCodeOf))] : undefined,
              durationMs: Math.round(seconds * 100_000) / 100,
            },
            'graphql request',
          );
        },
      };
    },
  };
}
