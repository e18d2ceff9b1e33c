/**
 * One error formatter for every path (issue 18, item 7): the same execution errors leave Apollo
 * (HTTP and, through the same function, graphql-ws) and the live hub as the same bytes, and an
 * unexpected error is logged with the request's id while its text never reaches the client.
 *
 * The errors come from real executions of a small schema whose resolvers fail in each way a
 * resolver can: a typed gateway error, a GraphQL error with its own code, a thrown plain error
 * (the gateway's bug, its text holding a secret), and a null where the schema promised a value.
 * Nothing in the gateway's own schema fails unexpectedly on purpose, so this schema is the trigger.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { buildSchema, execute, GraphQLError, parse } from 'graphql';
import { NotFoundError } from '../../adapters/contract/errors';
import {
  formatGraphQLError,
  internalError,
  InternalError,
  toGraphQLError,
} from '../../adapters/contract/graphql-errors';
import { createFormatError, unexpectedErrorLog } from '../../server/errors';
import { createLogger } from '../../server/logger';
import { serialize } from '../../subscriptions/live/format';

const SECRET = 'token s3cr3t-value at /etc/gateway/token on 10.0.0.7';

const schema = buildSchema(
  'type Query { gone: String coded: String boom: String item: Item } type Item { name: String missing: String! }',
);
const q = schema.getQueryType()!.getFields();
q.gone!.resolve = () => {
  throw new NotFoundError('no such volume', { backend: 'nomad-east', httpStatus: 404 });
};
q.coded!.resolve = () => {
  throw new GraphQLError('not allowed here', { extensions: { code: 'FORBIDDEN', hint: 'not sent' } });
};
q.boom!.resolve = () => {
  throw new Error(SECRET);
};
q.item!.resolve = () => ({ name: 'x', missing: null });

const DOCUMENT = '{ gone coded boom item { name missing } }';

type Ctx = { requestId: string };
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger(
  'info',
  new Writable({
    write: (chunk, _enc, done) => (
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l: string) => JSON.parse(l)),
      ),
      done()
    ),
  }),
);

let apollo: ApolloServer<Ctx>;

beforeAll(async () => {
  apollo = new ApolloServer<Ctx>({
    schema,
    formatError: createFormatError(),
    includeStacktraceInErrorResponses: false,
    plugins: [unexpectedErrorLog(logger) as unknown as ApolloServerPlugin<Ctx>],
  });
  await apollo.start();
});
afterAll(() => apollo.stop());

/** Apollo's answer (what HTTP sends), as JSON text. */
async function overApollo(requestId: string): Promise<string> {
  const r = await apollo.executeOperation({ query: DOCUMENT }, { contextValue: { requestId } });
  if (r.body.kind !== 'single') throw new Error('expected a single result');
  return JSON.stringify({ errors: r.body.singleResult.errors, data: r.body.singleResult.data });
}

describe('one error formatter', () => {
  it('should send the same errors from Apollo and from the live hub, byte for byte', async () => {
    const http = await overApollo('req-same-bytes');
    const hub = serialize(await execute({ schema, document: parse(DOCUMENT) })).json;
    expect(hub).toBe(http);
    expect(JSON.parse(http).errors).toEqual([
      {
        message: 'no such volume',
        locations: [{ line: 1, column: 3 }],
        path: ['gone'],
        extensions: { code: 'NOT_FOUND', retryable: false, backend: 'nomad-east', httpStatus: 404 },
      },
      {
        message: 'not allowed here',
        locations: [{ line: 1, column: 8 }],
        path: ['coded'],
        extensions: { code: 'FORBIDDEN' },
      },
      {
        message: 'Internal server error',
        locations: [{ line: 1, column: 14 }],
        path: ['boom'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
      // graphql-js's word, but about the gateway's answer (a null where the schema promised a value), not the request.
      {
        message: 'Internal server error',
        locations: [{ line: 1, column: 31 }],
        path: ['item', 'missing'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ]);
  });

  it('should log each unexpected error with the request id, and never send its text', async () => {
    const body = await overApollo('req-7f3a');
    expect(body).not.toContain('s3cr3t');
    const logged = lines.filter((l) => l.requestId === 'req-7f3a');
    expect(logged.map((l) => [l.msg, l.path])).toEqual([
      ['unexpected error while resolving', ['boom']],
      ['unexpected error while resolving', ['item', 'missing']],
    ]);
    expect((logged[0]!.err as { message: string }).message).toBe(SECRET);
  });

  it("should report the hub's unexpected errors with their path, for its log", async () => {
    const seen: unknown[] = [];
    serialize(await execute({ schema, document: parse(DOCUMENT) }), (err, path) =>
      seen.push([(err as Error).message, path]),
    );
    expect(seen).toEqual([
      [SECRET, ['boom']],
      ['Cannot return null for non-nullable field Item.missing.', ['item', 'missing']],
    ]);
  });

  it('should answer an error already logged where it happened as any unexpected one, without reporting it again', () => {
    const seen: unknown[] = [];
    const out = formatGraphQLError(toGraphQLError(new InternalError(new Error(SECRET))), {
      onUnexpected: (err) => seen.push(err),
    });
    expect(JSON.stringify(out)).toBe(JSON.stringify(internalError()));
    expect(seen).toEqual([]);
  });

  it('should have no other place that turns errors into extensions or writes the internal answer', () => {
    const root = resolve(__dirname, '../..');
    const files = (dir: string): string[] =>
      readdirSync(join(root, dir)).flatMap((n) =>
        n === 'generated'
          ? []
          : statSync(join(root, dir, n)).isDirectory()
            ? files(join(dir, n))
            : n.endsWith('.ts')
              ? [join(dir, n)]
              : [],
      );
    const offending = ['adapters', 'domain', 'server', 'subscriptions', 'resolvers']
      .flatMap(files)
      .filter((f) => f !== join('adapters', 'contract', 'graphql-errors.ts'))
      .flatMap((f) => {
        const text = readFileSync(join(root, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
        // An override extends its parent's extensions; anything else calling toExtensions() formats errors itself.
        const calls = [...text.matchAll(/(\w+)\.toExtensions\(\)/g)]
          .filter((m) => m[1] !== 'super')
          .map((m) => `${f}: ${m[0]}`);
        const internal = /message: 'Internal server error'|code: 'INTERNAL_SERVER_ERROR'/.test(text)
          ? [`${f}: the internal answer`]
          : [];
        return [...calls, ...internal];
      });
    expect(offending).toEqual([]);
  });
});
