/**
 * Compiled execution reaches Apollo Server through its public API only (issue 28, part 4). It used
 * to run behind Apollo's gateway interface, whose per-request context (an internal builder's object
 * literal with a `status` accessor) kept every request alive through young-generation GCs, and a
 * hand copy put in place of that internal builder cured it. Now it answers from the plugin hook
 * `responseForOperation`, and these checks fail if that public path is not the one in use:
 * - no gateway code reaches into @apollo/server's files or uses its gateway interface;
 * - over HTTP, Apollo runs no execution of its own for a request compiled execution answers, and
 *   the answer is the one Apollo gives for its own execution (status, headers from errors'
 *   `extensions.http`, formatted errors, a formatter that throws, `didEncounterErrors`), while the
 *   requests left to Apollo (bad variables, unknown operation, federated trace) reach its execution;
 * - the gateway's Apollo server, built as the gateway builds it, logs a compiled request's
 *   unexpected error as Apollo's own execution does;
 * - the effect the path is for, in the gateway process over HTTP: 35 KB survive each scavenge
 *   while lists of 100 are served (behind Apollo's gateway interface without the hand copy of its
 *   builder, about 500 KB: every request's objects).
 */
import { ApolloServer, HeaderMap, type ApolloServerPlugin, type GraphQLRequestListener } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSchema, GraphQLError, type GraphQLErrorExtensions, type GraphQLFormattedError } from 'graphql';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { GatewayContext } from '../../domain/context';
import { createApolloServer } from '../../server/apollo';
import {
  compiledExecution,
  EXECUTION_ENGINES,
  type ExecutionEngine,
  type InterpretedReason,
} from '../../server/execution/compiled';
import { operationLimits } from '../../server/limits';
import { apolloLimitOptions } from '../../server/limits/apollo';
import { createLogger } from '../../server/logger';
import { GatewayMetrics } from '../../server/metrics';
import { startGatewayProcess } from '../support/gateway-process';
import { files, root } from '../support/source-imports';
import { until } from '../support/until';

describe('Apollo Server through its public API only', () => {
  const CODE_DIRS = [
    'adapters',
    'bench',
    'domain',
    'resolvers',
    'schema',
    'scripts',
    'server',
    'simulators',
    'subscriptions',
  ];
  const exported = Object.keys(
    (
      JSON.parse(readFileSync(join(root, 'node_modules/@apollo/server/package.json'), 'utf8')) as {
        exports: Record<string, unknown>;
      }
    ).exports,
  );
  const PUBLIC = new Set(exported.map((e) => `@apollo/server${e.slice(1)}`));
  const sources = CODE_DIRS.flatMap((d) => files(d)).map((f) => ({ f, text: readFileSync(join(root, f), 'utf8') }));

  it('should name only the entry points @apollo/server exports, and never resolve its files', () => {
    // Imports, dynamic imports and requires (a profile's group names are not modules).
    const named = sources.flatMap(({ f, text }) =>
      [...text.matchAll(/(?:\bfrom|\bimport\(|\brequire\()\s*'(@apollo\/server(?:\/[^']*)?)'/g)].map((m) => ({
        f,
        spec: m[1]!,
      })),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ spec }) => !PUBLIC.has(spec)).map(({ f, spec }) => `${f}: ${spec}`)).toEqual([]);
    // Nor by path (its package.json, read for the version a benchmark names, is no module).
    expect(
      sources
        .filter(({ text }) =>
          /require\.resolve\(\s*'@apollo|node_modules\/@apollo\/server\/(?!package\.json)/.test(text),
        )
        .map(({ f }) => f),
    ).toEqual([]);
  });

  it('should not use the gateway interface, whose per-request context kept requests through scavenges', () => {
    const gatewayWords =
      /makeGatewayGraphQLRequestContext|ApolloServerOptionsWithGateway|GatewayInterface|server-gateway-interface|gatewayExecutor/;
    expect(sources.filter(({ text }) => gatewayWords.test(text)).map(({ f }) => f)).toEqual([]);
    // An untyped one: a `gateway` option beside Apollo Server.
    expect(
      sources.filter(({ text }) => /from '@apollo\/server'/.test(text) && /\bgateway\s*:/.test(text)).map(({ f }) => f),
    ).toEqual([]);
  });
});

describe('answers from responseForOperation, as Apollo answers its own execution', () => {
  const schema = buildSchema(
    'type Query { hello(n: Int!): String teapot: String boom: String strict: String! fails: String }',
  );
  const q = schema.getQueryType()!.getFields();
  q.hello!.resolve = (_root, { n }: { n: number }) => `hello ${n}`;
  q.teapot!.resolve = () => {
    // Apollo's head (a HeaderMap), not graphql-yoga's, whose typing of `http` is global.
    const extensions = {
      code: 'TEAPOT',
      http: { status: 418, headers: new HeaderMap([['x-teapot', 'yes']]) },
    } as unknown as GraphQLErrorExtensions;
    throw new GraphQLError('short and stout', { extensions });
  };
  q.boom!.resolve = () => {
    throw new Error('boom');
  };
  q.strict!.resolve = () => null;
  q.fails!.resolve = () => {
    throw new GraphQLError('the formatter fails on this one');
  };
  /** Shows what Apollo hands it (its own formatting of the error) and fails on one error. */
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    if (formatted.message.startsWith('the formatter fails')) throw new Error('formatter bug');
    return {
      ...formatted,
      extensions: { ...formatted.extensions, error: error instanceof GraphQLError ? 'GraphQLError' : typeof error },
    };
  };

  /** What one server's plugins saw: Apollo's own executions, and the errors they were told of. */
  interface Seen {
    executions: number;
    errors: string[];
  }
  const probe = (seen: Seen): { plugin: ApolloServerPlugin; listener: GraphQLRequestListener<object> } => {
    const listener: GraphQLRequestListener<object> = {
      async executionDidStart() {
        seen.executions++;
      },
      async didEncounterErrors(rc) {
        seen.errors.push(...rc.errors.map((e) => e.message).sort());
      },
    };
    return { plugin: { requestDidStart: async () => listener }, listener };
  };

  const own: Seen = { executions: 0, errors: [] };
  const compiled: Seen = { executions: 0, errors: [] };
  const observed: string[] = [];
  const urls: string[] = [];
  const servers: ApolloServer[] = [];

  beforeAll(async () => {
    const ownProbe = probe(own);
    const compiledProbe = probe(compiled);
    const observe = (engine: ExecutionEngine, reason?: InterpretedReason): void =>
      void observed.push(reason ? `${engine}/${reason}` : engine);
    servers.push(
      new ApolloServer({ schema, formatError, plugins: [ApolloServerPluginCacheControlDisabled(), ownProbe.plugin] }),
      new ApolloServer({
        schema,
        formatError,
        plugins: [
          ApolloServerPluginCacheControlDisabled(),
          compiledExecution(schema, observe, {
            sightings: 1,
            formatError,
            didEncounterErrors: (rc) => compiledProbe.listener.didEncounterErrors!(rc),
          }),
          compiledProbe.plugin,
        ],
      }),
    );
    for (const s of servers)
      urls.push((await startStandaloneServer(s, { listen: { port: 0, host: '127.0.0.1' } })).url);
  });
  afterAll(() => Promise.all(servers.map((s) => s.stop())));

  /** Both servers' answers (errors in GraphQL's order-free sense), which must be equal; the compiled server's. */
  async function same(
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; teapot: string | null; body: any }> {
    const answers = await Promise.all(
      urls.map(async (url) => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as { errors?: unknown[] };
        if (json.errors) json.errors.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
        return { status: res.status, teapot: res.headers.get('x-teapot'), body: json };
      }),
    );
    expect(answers[1]).toEqual(answers[0]);
    return answers[1]!;
  }

  /** Runs `send` and tells how many executions of Apollo's own each server ran meanwhile, and what compiled execution counted. */
  async function executionsDuring(
    send: () => Promise<unknown>,
  ): Promise<{ own: number; compiled: number; observed: string[] }> {
    const before = { own: own.executions, compiled: compiled.executions, observed: observed.length };
    await send();
    return {
      own: own.executions - before.own,
      compiled: compiled.executions - before.compiled,
      observed: observed.slice(before.observed),
    };
  }

  it('should answer data, partial results, errors’ HTTP status and headers, and a formatter that throws, without Apollo’s own execution', async () => {
    const seen = await executionsDuring(async () => {
      expect((await same({ query: '{ hello(n: 1) }' })).body).toEqual({ data: { hello: 'hello 1' } });
      const partial = await same({ query: '{ hello(n: 2) teapot boom fails }' });
      expect(partial.status).toBe(418);
      expect(partial.teapot).toBe('yes');
      expect(partial.body.data).toEqual({ hello: 'hello 2', teapot: null, boom: null, fails: null });
      expect(partial.body.errors.map((e: GraphQLFormattedError) => [e.message, e.extensions])).toEqual([
        ['Internal server error', { code: 'INTERNAL_SERVER_ERROR' }],
        ['boom', { code: 'INTERNAL_SERVER_ERROR', error: 'GraphQLError' }],
        ['short and stout', { code: 'TEAPOT', error: 'GraphQLError' }],
      ]);
      const strict = await same({ query: '{ strict }' });
      expect(strict.body.data).toBeNull();
    });
    expect(seen).toEqual({ own: 3, compiled: 0, observed: ['compiled', 'compiled', 'compiled'] });
    expect(compiled.errors).toEqual(own.errors);
    expect(compiled.errors.length).toBeGreaterThan(0);
  });

  it('should leave bad variables, an unknown operation and a federated trace to Apollo’s own execution, with the same answers', async () => {
    const seen = await executionsDuring(async () => {
      const bad = await same({ query: 'query Q($n: Int!) { hello(n: $n) }', variables: { n: 'x' } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(bad.body.errors[0].message).toContain('Variable "$n" got invalid value "x"');
      const unknown = await same({ query: '{ hello(n: 1) }', operationName: 'Nope' });
      expect(unknown.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
      await same({ query: '{ hello(n: 3) }' }, { 'apollo-federation-include-trace': 'ftv1' });
    });
    expect(seen).toEqual({ own: 3, compiled: 3, observed: ['graphql-js/not-compiled', 'graphql-js/ftv1-trace'] });
  });
});

describe('the gateway’s Apollo server', () => {
  it('should log an unexpected error of a compiled request with its request id, as Apollo’s own execution does', async () => {
    const schema = buildSchema('type Query { boom: String fine: String }');
    schema.getQueryType()!.getFields().boom!.resolve = () => {
      throw new Error('s3cr3t detail');
    };
    const answers: Record<string, unknown> = {};
    const logged: Record<string, unknown> = {};
    for (const engine of EXECUTION_ENGINES) {
      const lines: Array<Record<string, unknown>> = [];
      const logger = createLogger(
        'error',
        new Writable({
          write: (chunk: Buffer, _enc, done) => (
            lines.push(
              ...chunk
                .toString()
                .split('\n')
                .filter(Boolean)
                .map((l) => JSON.parse(l) as Record<string, unknown>),
            ),
            done()
          ),
        }),
      );
      const metrics = new GatewayMetrics({ processMetrics: false });
      // As server/app.ts builds it, over this schema, compiling at the first sighting.
      const limits = operationLimits();
      const apollo = createApolloServer({
        limits,
        limited: apolloLimitOptions<GatewayContext>(limits, schema),
        engine,
        compiledDocuments: { sightings: 1 },
        logger,
        metrics,
      });
      await apollo.start();
      try {
        const r = await apollo.executeOperation(
          { query: '{ boom fine }' },
          { contextValue: { requestId: `req-${engine}` } as unknown as GatewayContext },
        );
        answers[engine] = r.body.kind === 'single' ? r.body.singleResult : r.body;
        await until(() => lines.length > 0, 'the error logged');
        logged[engine] = lines.map((l) => [
          l.msg,
          l.requestId,
          l.path,
          (l.err as { message?: string } | undefined)?.message,
        ]);
        expect((await metrics.executions.get()).values.map((v) => v.labels.engine)).toEqual(
          engine === 'compiled' ? ['compiled'] : [],
        );
      } finally {
        await apollo.stop();
      }
    }
    expect(answers.compiled).toEqual(answers['graphql-js']);
    expect(JSON.stringify(answers.compiled)).not.toContain('s3cr3t');
    expect(logged).toEqual({
      compiled: [['unexpected error while resolving', 'req-compiled', ['boom'], 's3cr3t detail']],
      'graphql-js': [['unexpected error while resolving', 'req-graphql-js', ['boom'], 's3cr3t detail']],
    });
  });
});

/**
 * The effect the public path is for, in the gateway as it runs (`server/main.ts` over a memory
 * backend, compiled execution, over HTTP), measured as bench/gc.ts measures it: the gateway runs
 * under `--trace-gc-nvp`, and the bytes that survived each of the scavenges 200 lists of 100
 * caused are averaged. Behind Apollo's gateway interface without the hand copy of its builder,
 * every request's objects survived the scavenges that met them.
 */
it('should let a compiled request’s objects die young in the gateway process', async () => {
  const gateway = startGatewayProcess(
    {
      GATEWAY_BACKENDS: 'lab=memory',
      GATEWAY_BACKEND_LAB_SEED_VOLUMES: '100',
      EXECUTION_ENGINE: 'compiled',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '0',
      RATE_LIMIT_CALLER_RPS: '0',
      RATE_LIMIT_CALLER_IN_FLIGHT: '0',
      RATE_LIMIT_ADDRESS_RPS: '0',
      RATE_LIMIT_ADDRESS_IN_FLIGHT: '0',
    },
    { nodeArgs: ['--trace-gc-nvp'] },
  );
  try {
    const url = (await gateway.serving()).replace('localhost', '127.0.0.1');
    const query =
      '{ volumes(first: 100) { nodes { id namespace nativeId name status backendStatus sizeBytes createdAt updatedAt attachments { id state access device attachedAt } } } }';
    const list = async (): Promise<void> => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      expect(((await res.json()) as { data: { volumes: { nodes: unknown[] } } }).data.volumes.nodes).toHaveLength(100);
    };
    for (let i = 0; i < 50; i++) await list();
    const from = gateway.output().length;
    for (let i = 0; i < 200; i++) await list();
    const survived = [
      ...gateway
        .output()
        .slice(from)
        .matchAll(/ gc=s .* new_space_survived=(\d+)/g),
    ].map((m) => Number(m[1]));
    expect(survived.length).toBeGreaterThan(5);
    // Measured: 35 KB from the plugin; 490–520 KB behind Apollo's gateway interface without the hand copy.
    expect(survived.reduce((a, b) => a + b, 0) / survived.length).toBeLessThan(150 * 1024);
    const metrics = await (await fetch(url.replace('/graphql', '/metrics'))).text();
    expect(
      Number(/^gateway_executions_total\{engine="compiled",reason="none"\} (\d+)/m.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(200);
  } finally {
    await gateway.stop();
  }
});
