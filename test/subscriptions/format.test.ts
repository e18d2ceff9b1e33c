/**
 * How the hub formats the errors of the results it makes (subscriptions/live/format.ts), with the
 * rule every path uses (adapters/contract/graphql-errors.ts): a gateway error keeps its code and
 * message, anything unexpected is masked. The socket tests see typed codes end to end; an
 * unexpected error has no real trigger, so its masking is checked here on the pure function
 * (test/server/error-format.test.ts compares the hub's bytes with Apollo's).
 */
import { GraphQLError } from 'graphql';
import { ErrorCode, GatewayError, NotFoundError } from '../../adapters/contract/errors';
import { formatGraphQLError as formatError } from '../../adapters/contract/graphql-errors';
import { errorResult, serialize } from '../../subscriptions/live/format';

describe('live result formatting', () => {
  it("keeps a gateway error's code, message and path, also when wrapped", () => {
    const inner = new NotFoundError('no such operation');
    const e = new GraphQLError('wrapped', {
      originalError: new GraphQLError('mid', { originalError: inner }),
      path: ['operationUpdated'],
    });
    expect(formatError(e)).toEqual({
      message: 'no such operation',
      path: ['operationUpdated'],
      extensions: expect.objectContaining({ code: 'NOT_FOUND' }),
    });
  });

  it('masks an unexpected error and reports it, never its text', () => {
    const seen: unknown[] = [];
    const boom = new Error('secret /etc/gateway/token at 10.0.0.7');
    const out = formatError(
      new GraphQLError('secret /etc/gateway/token at 10.0.0.7', {
        originalError: boom,
        path: ['volumeChanged', 'volume'],
      }),
      { onUnexpected: (err) => seen.push(err) },
    );
    expect(out).toEqual({
      message: 'Internal server error',
      path: ['volumeChanged', 'volume'],
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(seen).toEqual([boom]);
  });

  it("keeps graphql-js's own errors (no original error) with their code, BAD_USER_INPUT by default", () => {
    expect(formatError(new GraphQLError('Variable "$id" of required type "ID!" was not provided.'))).toEqual({
      message: 'Variable "$id" of required type "ID!" was not provided.',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('serializes once: data kept, errors formatted, internals masked', () => {
    const r = serialize({
      data: { volumeChanged: null },
      errors: [
        new GraphQLError('x', {
          originalError: new GatewayError(ErrorCode.RequestLimitExceeded, 'no backend calls here'),
        }),
        new GraphQLError('y', { originalError: new Error('stack here') }),
      ],
    });
    expect(JSON.parse(r.json)).toEqual({
      errors: [
        { message: 'no backend calls here', extensions: expect.objectContaining({ code: 'REQUEST_LIMIT_EXCEEDED' }) },
        { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
      ],
      data: { volumeChanged: null },
    });
    expect(errorResult(new NotFoundError('gone')).errors![0]!.extensions.code).toBe('NOT_FOUND');
  });
});
