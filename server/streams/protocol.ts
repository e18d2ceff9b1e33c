/**
 * What a stream protocol writes: the shared subscription pump (subscription.ts) knows results,
 * ends and heartbeats; each protocol (sse.ts, multipart.ts) turns them into its bytes.
 */

export interface StreamProtocol {
  /** Response headers of a stream (status 200). */
  readonly headers: Readonly<Record<string, string>>;
  /** Written right after the headers, so that proxies and browsers see the stream start. */
  readonly opening: string;
  /** One result; `json` is the serialized execution result (`{"data":…,"errors":…}`). */
  next(json: string): string;
  /** What {@link next} puts before and after the result's JSON: `next(json)` is `around[0] + json + around[1]`. */
  readonly around: readonly [string, string];
  /** The subscription is over (the hub's stream ended, or a start was refused with errors). */
  readonly complete: string;
  /** Sent every {@link heartbeatMs} on an open stream. */
  readonly heartbeat: string;
  readonly heartbeatMs: number;
  /**
   * Written last when the stream ends for a reason the client should recover from by
   * subscribing again (shutdown, a fatal error): `message` and `code` as a GraphQL error.
   * @param retryMs how long an SSE client should wait before reconnecting
   */
  restart(code: string, message: string, retryMs: number): string;
}
