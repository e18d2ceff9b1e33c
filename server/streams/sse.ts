/**
 * GraphQL over SSE (the graphql-sse protocol, "distinct connections mode"): one request, one
 * subscription, one `text/event-stream` response. Each result is an `event: next` whose data is
 * the execution result; `event: complete` ends it. Heartbeats are SSE comments (`:`), every
 * 12 s as graphql-sse's own server sends them. On shutdown the stream gets a `retry:` field (how
 * long an EventSource waits before reconnecting) and ends without `complete`, which graphql-sse's
 * client and Hive Gateway treat as a connection to retry.
 */
import type { StreamProtocol } from './protocol';

const NEXT = ['event: next\ndata: ', '\n\n'] as const;

export const SSE: StreamProtocol = {
  headers: {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // nginx and similar proxies: pass events on as they come.
    'x-accel-buffering': 'no',
  },
  // An empty comment: some browsers only report an open stream once a byte of it arrived.
  opening: ':\n\n',
  next: (json) => `${NEXT[0]}${json}${NEXT[1]}`,
  around: NEXT,
  complete: 'event: complete\ndata:\n\n',
  heartbeat: ':\n\n',
  heartbeatMs: 12_000,
  restart: (_code, _message, retryMs) => `retry: ${retryMs}\n\n`,
};
