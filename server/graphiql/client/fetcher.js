/**
 * GraphiQL's fetcher: queries and mutations over HTTP (the toolkit's fetcher, multipart
 * included), subscriptions over graphql-ws on the same path.
 *
 * Subscriptions get their own small wrapper instead of the toolkit's `subscriptionUrl`: that
 * one turns a refused socket into an unhandled rejection and an `{"isTrusted": true}` result,
 * and retries in silence. Here a failure ends the run at once with a message a person can act
 * on, the socket is closed when the user stops the subscription, and the headers editor's JSON
 * goes in the `connection_init` payload (browsers cannot set headers on a WebSocket).
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { createClient } from 'graphql-ws';

/** True when the operation that will run (by name, or the only one) is a subscription. */
function isSubscription(documentAST, operationName) {
  const ops = (documentAST?.definitions ?? []).filter((d) => d.kind === 'OperationDefinition');
  const op = operationName ? ops.find((d) => d.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
  return op?.operation === 'subscription';
}

/**
 * graphql-ws rejects with whatever the socket gave it: an Error, a CloseEvent or a bare Event.
 * The result is shaped like a GraphQL error, not an Error, because GraphiQL prints an Error's
 * stack into the result pane.
 */
function describeFailure(err, url) {
  if (err instanceof Error) return { message: err.message };
  if (err && typeof err.code === 'number')
    return { message: `The subscription socket ${url} closed: ${err.code} ${err.reason || ''}`.trim() };
  return { message: `Could not open a graphql-ws socket at ${url}: does the server offer subscriptions there?` };
}

function subscribe(url, params, headers) {
  const client = createClient({ url, lazy: true, retryAttempts: 0, connectionParams: headers ?? undefined });
  const inner = client.iterate(params);
  const close = () => void client.dispose();
  const iterator = {
    async next() {
      try {
        const step = await inner.next();
        if (step.done) close();
        return step;
      } catch (err) {
        close();
        throw describeFailure(err, url);
      }
    },
    async return() {
      await inner.return?.();
      close();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * @param {string} httpUrl absolute URL of the GraphQL endpoint
 * @param {string} wsUrl the same endpoint as ws: or wss:
 */
export function createFetcher(httpUrl, wsUrl) {
  const http = createGraphiQLFetcher({ url: httpUrl });
  return (params, opts) =>
    isSubscription(opts?.documentAST, params.operationName)
      ? subscribe(wsUrl, params, opts?.headers)
      : http(params, opts);
}
