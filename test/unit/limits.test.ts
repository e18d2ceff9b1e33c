/**
 * The operation limits without HTTP: settings, the cost model on the real schema, the token
 * limit's recognition, and the execution limits under graphql-js's own `execute` (no Apollo),
 * which is what graphql-ws or another executor would run.
 */
import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, execute, parse, validate, specifiedRules, GraphQLError } from 'graphql';
import type { GatewayError } from '../../adapters/contract/errors';
import { buildGatewaySchema } from '../../server/schema';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { DEFAULT_LIMITS, limitsConfig, operationLimits } from '../../server/limits';
import { checkCost, estimateCost } from '../../server/limits/cost';
import { tokenLimitError } from '../../server/limits/tokens';

const schema = buildGatewaySchema();

describe('limits settings', () => {
  it('should default to the documented values (introspection on outside production)', () => {
    expect(limitsConfig({}, {}, { demo: false })).toEqual({ ...DEFAULT_LIMITS, introspection: true });
    expect(DEFAULT_LIMITS).toMatchObject({
      maxDepth: 6,
      maxAliases: 15,
      maxDirectives: 50,
      maxTokens: 1000,
      maxCost: 5000,
      maxResponseBytes: 10_485_760,
      maxBackendCallsPerOperation: 200,
      operationTimeoutMs: 30_000,
    });
  });

  it('should turn introspection off in production unless in demo mode or set explicitly', () => {
    expect(limitsConfig({ NODE_ENV: 'production' }, {}, { demo: false }).introspection).toBe(false);
    expect(limitsConfig({ NODE_ENV: 'production' }, {}, { demo: true }).introspection).toBe(true);
    expect(limitsConfig({ NODE_ENV: 'production', INTROSPECTION: 'true' }, {}, { demo: false }).introspection).toBe(
      true,
    );
    expect(limitsConfig({}, { limits: { introspection: false } }, { demo: true }).introspection).toBe(false);
  });

  it('should read env variables over file keys', () => {
    const c = limitsConfig(
      { MAX_DEPTH: '8', MAX_COST: '100' },
      { limits: { maxDepth: 4, maxAliases: 3, operationTimeoutMs: 5000 } },
      { demo: false },
    );
    expect(c).toMatchObject({ maxDepth: 8, maxCost: 100, maxAliases: 3, operationTimeoutMs: 5000 });
  });

  it('should name the bad setting', () => {
    expect(() => limitsConfig({ MAX_TOKENS: 'lots' }, {}, { demo: false })).toThrow(
      new ConfigError('MAX_TOKENS', 'must be a whole number from 10 to 1000000 (got "lots")'),
    );
    expect(() => limitsConfig({}, { limits: { maxCost: -1 } }, { demo: false })).toThrow(ConfigError);
    expect(() => limitsConfig({}, { limits: { maxDepht: 3 } }, { demo: false })).toThrow(/limits\.maxDepht/);
    expect(() => limitsConfig({ INTROSPECTION: 'maybe' }, {}, { demo: false })).toThrow(/INTROSPECTION/);
    expect(() => limitsConfig({}, { limits: [] }, { demo: false })).toThrow(/limits/);
  });

  it('should be part of the gateway configuration', () => {
    expect(loadConfig({ MAX_BACKEND_CALLS_PER_OPERATION: '50' }).limits.maxBackendCallsPerOperation).toBe(50);
  });
});

describe('cost model (@cost/@listSize in the schema)', () => {
  const cost = (query: string, variables?: Record<string, unknown>): number =>
    estimateCost({ schema, document: parse(query), variables });

  it('should remember an estimate per document only for the same priced variable values', () => {
    const document = parse(
      'query($n: Int, $id: ID!, $more: Boolean!) { volume(id: $id) { id } volumes(first: $n) { nodes { id attachments { id } } } storagePlugins @include(if: $more) { nodes { id } } }',
    );
    const check = (variables: Record<string, unknown>): string | undefined =>
      (checkCost(1000, { schema, document, variables })?.originalError as GatewayError | undefined)?.code;
    expect(check({ n: 10, id: 'a', more: false })).toBeUndefined();
    expect(check({ n: 500, id: 'a', more: false })).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    expect(check({ n: 10, id: 'b', more: false })).toBeUndefined();
    expect(check({ n: 10, id: 'b', more: true })).toBe(check({ n: 10, id: 'c', more: true }));
    expect(
      cost(
        'query($n: Int, $more: Boolean!) { volumes(first: $n) { nodes { id } } storagePlugins @include(if: $more) { nodes { id } } }',
        { n: 10, more: true },
      ),
    ).toBeGreaterThan(
      cost(
        'query($n: Int, $more: Boolean!) { volumes(first: $n) { nodes { id } } storagePlugins @include(if: $more) { nodes { id } } }',
        { n: 10, more: false },
      ),
    );
    expect(check({ n: 500, id: 'b', more: false })).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
  });

  it("should price the README's examples under the default limit", () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThan(5);
    // Valid first: an unknown field costs nothing, so a stale example would pass unpriced.
    for (const q of blocks)
      expect({ q, errors: validate(schema, parse(q)).map((e) => e.message) }).toEqual({ q, errors: [] });
    for (const q of blocks)
      expect({ q, cost: cost(q, { id: 'x', operationId: 'y' }) <= DEFAULT_LIMITS.maxCost }).toEqual({ q, cost: true });
  });

  it('should multiply by first, count detail reads and assumed list sizes', () => {
    expect(cost('{ volumes(first: 10) { nodes { id name } } }')).toBe(5 + 1 + 10 * 1);
    expect(cost('{ volumes { nodes { id } } }')).toBe(5 + 1 + 50);
    expect(cost('{ volumes(first: 10) { nodes { sizeBytes } pageInfo { hasNextPage } } }')).toBe(5 + 1 + 10 * (1 + 5));
    expect(cost('{ volumes(first: 10) { edges { cursor node { id } } } }')).toBe(5 + 1 + 10 * (1 + 1));
    expect(cost('{ volumes(first: 2) { nodes { attachments { id } } } }')).toBe(5 + 1 + 2 * (1 + 5 + 5 * 1));
    expect(cost('query($n: Int) { volumes(first: $n) { nodes { id } } }', { n: 100 })).toBe(5 + 1 + 100);
    expect(cost('mutation { deleteVolume(input: { volumeId: "x" }) { deletedId } }')).toBe(10 + 1);
  });

  it('should not count a first above the largest page (the resolver refuses it)', () => {
    expect(cost('{ volumes(first: 100000) { nodes { id } } }')).toBe(5 + 1 + 500);
  });

  it('should refuse a fragment bomb without expanding it', () => {
    const frags = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(
      '\n',
    );
    const doc = `{ ...F0 }\n${frags}\nfragment F30 on Query { storageBackends { id } }`;
    expect(cost(doc)).toBe(Infinity);
  });
});

describe('token limit', () => {
  const parseError = (q: string, maxTokens: number): unknown => {
    try {
      parse(q, { maxTokens });
    } catch (err) {
      return err;
    }
    throw new Error('parsed');
  };

  it('should recognise graphql-js refusing the token after the limit', () => {
    expect(tokenLimitError(parseError(`{ ${'a '.repeat(20)}}`, 10), 10)?.code).toBe('MAX_TOKENS_LIMIT');
    // Comments are not tokens, for graphql-js and here alike.
    expect(tokenLimitError(parseError(`# c\n{ a # c\n ${'b '.repeat(20)}}`, 10), 10)?.code).toBe('MAX_TOKENS_LIMIT');
  });

  it('should leave syntax errors alone, also in long documents', () => {
    expect(tokenLimitError(parseError('{ a ) b }', 10), 10)).toBeUndefined();
    expect(tokenLimitError(parseError(`{ a ) ${'b '.repeat(50)}}`, 10), 10)).toBeUndefined();
    expect(tokenLimitError(parseError(`{ ${'a '.repeat(8)}"unterminated`, 10), 10)).toBeUndefined();
    expect(tokenLimitError(new GraphQLError('other'), 10)).toBeUndefined();
  });
});

describe('validation rules with graphql-js alone', () => {
  const limits = operationLimits();
  const errors = (q: string): Array<unknown> =>
    validate(schema, parse(q), [...specifiedRules, ...limits.validationRules]).map(
      (e) => (e.originalError as { code?: string } | undefined)?.code ?? 'GRAPHQL',
    );

  it('should refuse with typed originals', () => {
    expect(errors('{ volumes { nodes { attachments { volume { attachments { volume { id } } } } } } }')).toEqual([
      'MAX_DEPTH_LIMIT',
    ]);
    expect(errors('{ storageBackends { id } }')).toEqual([]);
  });
});

describe('execution limits under graphql-js execute (no Apollo)', () => {
  const sdl = 'type Query { items(n: Int!): [Item!]! slow: String } type Item { id: ID! text: String }';
  const build = () => {
    const s = buildSchema(sdl);
    s.getQueryType()!.getFields().items!.resolve = (_p, { n }) =>
      Array.from({ length: n as number }, (_, i) => ({ id: String(i), text: 'x'.repeat(100) }));
    s.getQueryType()!.getFields().slow!.resolve = () => new Promise((r) => setTimeout(() => r('late'), 200));
    return s;
  };

  it('should stop at the response-size cap with one error', async () => {
    const limits = operationLimits({ maxResponseBytes: 4096 });
    const s = limits.wrapSchema(build());
    const exec = limits.executionGuards.createExecutionLimits();
    const result = await execute({
      schema: s,
      document: parse('{ items(n: 1000) { id text } }'),
      contextValue: { limits: exec },
    });
    exec.end();
    // What a transport's formatError does: the typed original's extensions.
    const formatted = (result.errors ?? []).map((e) => ({
      message: e.message,
      extensions: (e.originalError as GatewayError).toExtensions(),
    }));
    const codes = limits.executionGuards.finishErrors(formatted).map((e) => e.extensions?.code);
    expect(codes).toEqual(['RESPONSE_TOO_LARGE']);
    expect(exec.bytes).toBeLessThan(4096 + 200);
  });

  it('should leave execution alone without limits in the context, and under the cap', async () => {
    const limits = operationLimits();
    const s = limits.wrapSchema(build());
    expect((await execute({ schema: s, document: parse('{ items(n: 3) { id } }'), contextValue: {} })).data).toEqual({
      items: [{ id: '0' }, { id: '1' }, { id: '2' }],
    });
    const exec = limits.executionGuards.createExecutionLimits();
    const r = await execute({ schema: s, document: parse('{ items(n: 3) { id } }'), contextValue: { limits: exec } });
    exec.end();
    expect(r.errors).toBeUndefined();
  });

  it('should fail fields after the deadline with OPERATION_TIMEOUT', async () => {
    const limits = operationLimits({ operationTimeoutMs: 50 });
    const s = limits.wrapSchema(build());
    const exec = limits.executionGuards.createExecutionLimits();
    const r = await execute({
      schema: s,
      document: parse('{ slow items(n: 2) { id } }'),
      contextValue: { limits: exec },
    });
    await new Promise((res) => setTimeout(res, 100));
    const late = await execute({ schema: s, document: parse('{ slow }'), contextValue: { limits: exec } });
    exec.end();
    expect(r.errors).toBeUndefined();
    expect(late.errors?.map((e) => (e.originalError as { code?: string }).code)).toEqual(['OPERATION_TIMEOUT']);
    expect(exec.signal.aborted).toBe(true);
  });

  it('should see an aborted client signal as a stop', async () => {
    const limits = operationLimits();
    const s = limits.wrapSchema(build());
    const client = new AbortController();
    const exec = limits.executionGuards.createExecutionLimits(client.signal);
    client.abort();
    const r = await execute({ schema: s, document: parse('{ slow }'), contextValue: { limits: exec } });
    exec.end();
    expect(r.errors?.map((e) => (e.originalError as { code?: string }).code)).toEqual(['OPERATION_CANCELLED']);
  });

  it('should let go of the client signal once the execution ended, so a signal that never aborts keeps nothing alive', async () => {
    const limits = operationLimits();
    const s = limits.wrapSchema(build());
    const client = new AbortController();
    const exec = limits.executionGuards.createExecutionLimits(client.signal);
    // Node keeps a composite signal with an abort listener alive until it aborts: the listener must go.
    expect(getEventListeners(exec.signal, 'abort')).toHaveLength(1);
    const r = await execute({ schema: s, document: parse('{ items(n: 1) { id } }'), contextValue: { limits: exec } });
    exec.end();
    expect(r.errors).toBeUndefined();
    expect(getEventListeners(exec.signal, 'abort')).toHaveLength(0);
    // Still linked to the client: a backend call still in flight is cancelled when the client goes.
    client.abort();
    expect(exec.signal.aborted).toBe(true);
  });
});
