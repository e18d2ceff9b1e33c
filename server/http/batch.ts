/**
 * HTTP batching (Apollo Client's `BatchHttpLink`, graphql-request's `batchRequests`): a POST whose
 * JSON body is an array of operations, answered with the array of their results, in order.
 *
 * The batch is taken apart here, not by Apollo Server (whose `allowBatchedHttpRequests` runs every
 * operation in one context, so they would share one backend-call budget, deadline and loaders):
 * each operation goes through the screen, execution and limits a request of its own gets: persisted
 * queries and trusted documents, its own context (credentials, loaders, `MAX_BACKEND_CALLS_PER_OPERATION`,
 * the operation deadline), validation (depth, aliases, cost), its own span and log line. The caller's
 * rate and in-flight budgets are charged once per operation (server/http/graphql-handler.ts).
 * An operation refused at the edge gets its error in its own place; the others run.
 */
import type { OperationParams } from './operation-screen';
import { EdgeError, EdgeErrorCode } from './errors';

/** 413 BATCH_TOO_LARGE: more operations in one batch than `MAX_BATCH_SIZE`. */
export class BatchTooLargeError extends EdgeError {
  constructor(maxBatchSize: number, operations: number) {
    super(
      EdgeErrorCode.BatchTooLarge,
      413,
      maxBatchSize === 0
        ? 'HTTP batching is off on this gateway (MAX_BATCH_SIZE=0): send one operation per request'
        : `this batch holds ${operations} operations, more than the ${maxBatchSize} one batch may hold (MAX_BATCH_SIZE): send smaller batches`,
      { maxBatchSize, operations },
    );
  }
}

/**
 * The operations of a batch body.
 * @throws BatchTooLargeError over `maxBatchSize`; EdgeError BAD_REQUEST when it is empty or an item is not a JSON object
 */
export function batchOperations(body: readonly unknown[], maxBatchSize: number): OperationParams[] {
  if (body.length > maxBatchSize) throw new BatchTooLargeError(maxBatchSize, body.length);
  if (body.length === 0) throw new EdgeError(EdgeErrorCode.BadRequest, 400, 'the batch holds no operations');
  body.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new EdgeError(EdgeErrorCode.BadRequest, 400, `item ${i} of the batch is not a JSON object`);
  });
  return body as OperationParams[];
}

/** How one operation of a batch is run. */
export interface BatchRun {
  /** The parameters to execute. @throws EdgeError when the operation is refused */
  screen(params: OperationParams): OperationParams;
  /** Executes screened parameters; answers the result's JSON text. */
  execute(params: OperationParams): Promise<string>;
  /** Told of each operation refused at the edge (metrics); must not throw. */
  onRefused?(err: EdgeError): void;
}

/** Runs the operations at once; answers the JSON array of their results, each in its operation's place. */
export async function runBatch(operations: readonly OperationParams[], run: BatchRun): Promise<string> {
  const results = await Promise.all(
    operations.map(async (params) => {
      let screened: OperationParams;
      try {
        screened = run.screen(params);
      } catch (err) {
        if (!(err instanceof EdgeError)) throw err;
        run.onRefused?.(err);
        return JSON.stringify(err.toBody());
      }
      return run.execute(screened);
    }),
  );
  return `[${results.join(',')}]`;
}
