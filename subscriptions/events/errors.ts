/** Errors of the event log's writers. */

/**
 * A fenced append found the lease key without the writer's token (another replica holds the lease,
 * or it expired): nothing was written. The writer stops acting as the holder. Internal: it never
 * reaches a client. The token is not part of the message (it is the lease's secret).
 */
export class LeaseLostError extends Error {
  readonly code = 'LEASE_LOST' as const;

  /** @param key the lease key whose value was not the writer's token */
  constructor(readonly key: string) {
    super(`the lease ${key} is not held with this writer's token: the append was not written`);
    this.name = 'LeaseLostError';
  }
}
