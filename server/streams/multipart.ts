/**
 * Apollo's multipart HTTP subscriptions (`subscriptionSpec=1.0`, what Apollo Client's HttpLink
 * and Apollo Router speak): a `multipart/mixed` response whose parts are JSON. A result is
 * `{"payload":<execution result>}`, a heartbeat `{}` every 5 s, and an error that ends the
 * subscription for the transport's reasons (shutdown, a slow or failed stream) is
 * `{"payload":null,"errors":[…]}`; the closing boundary ends the stream.
 */
import type { StreamProtocol } from './protocol';

const BOUNDARY = 'graphql';
const HEAD = '\r\ncontent-type: application/json; charset=utf-8\r\n\r\n';
const TAIL = `\r\n--${BOUNDARY}`;
const part = (json: string): string => `${HEAD}${json}${TAIL}`;

export const MULTIPART: StreamProtocol = {
  headers: {
    'content-type': `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec="1.0"`,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  },
  // The first boundary, then a heartbeat: the client sees the stream open at once.
  opening: `\r\n--${BOUNDARY}${part('{}')}`,
  next: (json) => part(`{"payload":${json}}`),
  around: [`${HEAD}{"payload":`, `}${TAIL}`],
  complete: '--\r\n',
  heartbeat: part('{}'),
  heartbeatMs: 5_000,
  restart: (code, message) =>
    `${part(JSON.stringify({ payload: null, errors: [{ message, extensions: { code } }] }))}--\r\n`,
};
