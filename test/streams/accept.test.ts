/** Which stream an `Accept` header asks for (server/streams/accept.ts), as the clients send it. */
import { streamKindOf, wantsEventsOnly } from '../../server/streams/accept';

describe('Accept for subscription streams', () => {
  it.each([
    ['text/event-stream', 'sse'],
    ['multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/json', 'multipart'],
    ['multipart/mixed;boundary="graphql";subscriptionSpec="1.0"', 'multipart'],
    ['application/json, text/event-stream;q=0.5', 'sse'],
    ['text/event-stream;q=0, application/json', undefined],
    ['multipart/mixed;deferSpec=20220824,application/json', undefined],
    ['application/json', undefined],
    [undefined, undefined],
  ])('%s → %s', (accept, kind) => {
    expect(streamKindOf(accept)).toBe(kind);
  });

  it('should answer a query as events only when no JSON answer is accepted', () => {
    expect(wantsEventsOnly('text/event-stream')).toBe(true);
    expect(wantsEventsOnly('text/event-stream, application/json')).toBe(false);
    expect(wantsEventsOnly('text/event-stream, */*')).toBe(false);
    expect(wantsEventsOnly('application/graphql-response+json, text/event-stream')).toBe(false);
    expect(wantsEventsOnly('multipart/mixed;subscriptionSpec=1.0')).toBe(false);
  });
});
