/**
 * The README's examples, run verbatim against demo mode (the same code `npm start` runs):
 * queries and mutations over HTTP, subscriptions over graphql-ws with the demo activity on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import {
  Kind,
  TypeInfo,
  isObjectType,
  parse,
  visit,
  visitWithTypeInfo,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { startGateway, type RunningGateway } from '../server/app';
import { createRegistry } from '../server/backends';
import { startDemoBackends, type DemoBackends } from '../server/demo';
import { createLogger } from '../server/logger';
import { buildGatewaySchema } from '../server/schema';
import { README_HTTP_CLIENT, README_WS_CLIENT, runReadmeHttpClient, runReadmeWsClient } from './support/readme-clients';
import { until } from './support/until';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const graphqlBlocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
const isSubscription = (q: string): boolean => /^\s*subscription\b/.test(q);
/** Each subscription example with the answer the README shows after it: the first change after SUBSCRIBED. */
const subscriptionBlocks = [...readme.matchAll(/```graphql\n(subscription[\s\S]*?)```\s*```json\n([\s\S]*?)```/g)].map(
  (m) => ({ query: m[1]!, answer: JSON.parse(m[2]!) as { data: Record<string, any> } }),
);
/** Each curl example, with the answer the README shows right after it (a ```json block), if any. */
const curlBlocks = [...readme.matchAll(/```sh\n(curl [\s\S]*?)```(?:\s*```json\n([\s\S]*?)```)?/g)].map((m) => ({
  cmd: m[1]!.replace(/\\\n\s*/g, ' '),
  answer: m[2] === undefined ? undefined : (JSON.parse(m[2]) as unknown),
}));
/**
 * A JSON value's shape: objects by their keys (recursively), arrays by their items' shapes, and
 * leaves as "value" (null included: a field the README shows as a string may be null in another
 * event of the same kind, e.g. `previousStatus` of a new volume).
 */
function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return [...new Set(v.map((x) => JSON.stringify(shapeOf(x))))].map((x) => JSON.parse(x));
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)]));
  return 'value';
}

const curlQuery = (cmd: string): string => (JSON.parse(/-d '([^']*)'/.exec(cmd)![1]!) as { query: string }).query;

/**
 * Where an operation leaves out `id` on an object type that has one: such results do not
 * normalize in a client cache (issue 10). Fields selected through inline fragments on the same
 * type (or with no type condition) count; union selections are checked in their members' fragments.
 */
function missingIds(schema: GraphQLSchema, query: string): string[] {
  const typeInfo = new TypeInfo(schema);
  const missing: string[] = [];
  const selected = (set: SelectionSetNode, type: string): string[] =>
    set.selections.flatMap((s) => {
      if (s.kind === Kind.FIELD) return [s.name.value];
      if (s.kind === Kind.INLINE_FRAGMENT && (!s.typeCondition || s.typeCondition.name.value === type))
        return selected(s.selectionSet, type);
      return [];
    });
  visit(
    parse(query),
    visitWithTypeInfo(typeInfo, {
      SelectionSet(node) {
        const type = typeInfo.getParentType();
        if (
          isObjectType(type) &&
          type.getFields().id &&
          !type.name.startsWith('_') &&
          !selected(node, type.name).includes('id')
        ) {
          missing.push(`${type.name} at line ${node.loc?.startToken.line}`);
        }
      },
    }),
  );
  return missing;
}

describe('README examples', () => {
  let demo: DemoBackends;
  let gateway: RunningGateway;
  const post = async (body: unknown, headers: Record<string, string> = {}): Promise<any> => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.json();
  };
  /** The operation the README's curl attach started (the operation block takes it as `$operationId`). */
  let operationId: string | undefined;
  const remember = (data: unknown): void => {
    const found = /"attachVolume":\{"operation":\{"id":"([^"]+)"/.exec(JSON.stringify(data ?? null));
    if (found && operationId === undefined) operationId = found[1];
  };

  beforeAll(async () => {
    // The demo as `npm start` runs it, activity included (a change every 5 s), whatever the environment says.
    demo = await startDemoBackends({ activity: { intervalMs: 5_000 } });
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry: createRegistry(demo.backends),
      logger: createLogger('silent'),
    });
    // The volume doctor's first pass of each backend (a second or two): the problems example shows its answer.
    await until(
      async () =>
        (await post({ query: '{ volumeProblems { omittedBackends { reason } } }' }, demo.headers)).data.volumeProblems
          .omittedBackends.length === 0,
      "the volume doctor's first pass",
      30_000,
      200,
    );
  }, 60_000);
  afterAll(async () => {
    await gateway.stop();
    await demo.stop();
  });

  it('should have examples to run, and answers to compare', () => {
    expect(graphqlBlocks.length).toBeGreaterThanOrEqual(6);
    expect(curlBlocks.length).toBeGreaterThanOrEqual(2);
    expect(curlBlocks.filter((c) => c.answer !== undefined).length).toBeGreaterThanOrEqual(2);
    expect(subscriptionBlocks.map((b) => Object.keys(b.answer.data)[0]).sort()).toEqual([
      'attachmentChanged',
      'volumeChanged',
    ]);
    expect(graphqlBlocks.filter(isSubscription)).toHaveLength(subscriptionBlocks.length);
    expect(README_WS_CLIENT).toContain('since: cursor');
  });

  it('should select id on every object that has one, in every example', () => {
    const schema = buildGatewaySchema();
    const queries = [...graphqlBlocks, ...curlBlocks.map((c) => curlQuery(c.cmd))];
    expect(queries.map((q) => ({ q, missing: missingIds(schema, q) }))).toEqual(
      queries.map((q) => ({ q, missing: [] })),
    );
    // The check itself finds what it is for.
    expect(missingIds(schema, '{ volumes { nodes { name attachments { state } } } }')).toEqual([
      'Volume at line 1',
      'VolumeAttachment at line 1',
    ]);
    // The graphql-ws client's subscription too.
    const wsQuery = /const query = '([^']*)'/.exec(README_WS_CLIENT ?? '')?.[1];
    expect(wsQuery && missingIds(schema, wsQuery)).toEqual([]);
  });

  it('should answer every curl example as written (headers and body), as the answer shown after it', async () => {
    // The SSE example (`curl -N`) streams until stopped: test/streams/readme.test.ts runs it.
    for (const { cmd, answer } of curlBlocks.filter((c) => !/\s-N\s/.test(c.cmd))) {
      const headers = Object.fromEntries(
        [...cmd.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]),
      );
      const data = /-d '([^']*)'/.exec(cmd)![1]!;
      const body = await post(JSON.parse(data), headers);
      if (answer === undefined) expect({ cmd, errors: body.errors }).toEqual({ cmd, errors: undefined });
      else expect({ cmd, body }).toEqual({ cmd, body: answer });
      remember(body.data);
    }
  });

  it('should answer every GraphQL block without errors, in order (after the curl examples, whose attach the operation block reads)', async () => {
    const id = (await post({ query: '{ volumeByNativeId(backend: "nomad-east", nativeId: "postgres-data") { id } }' }))
      .data.volumeByNativeId.id;
    for (const query of graphqlBlocks.filter((q) => !isSubscription(q))) {
      const variables = {
        ...(query.includes('$id') ? { id } : {}),
        ...(query.includes('$operationId') ? { operationId } : {}),
      };
      const body = await post({ query, variables }, demo.headers);
      expect({ query, errors: body.errors }).toEqual({ query, errors: undefined });
      expect(body.data).toBeDefined();
    }
  });

  it("should run the README's JavaScript client: it attaches and waits for the end", async () => {
    expect(README_HTTP_CLIENT).toContain('attachVolume');
    // Demo region: golden-image and batch-1 (simulators/openstack/demo.ts); the other examples leave both alone.
    const volumeId = (
      await post(
        { query: '{ volumes(filter: { backends: ["openstack"], name: "golden-image" }) { nodes { id } } }' },
        demo.headers,
      )
    ).data.volumes.nodes[0].id;
    const env = {
      OS_TOKEN: demo.kinds.openstack.token,
      NOMAD_TOKEN: demo.kinds.nomad.tokens['nomad-east']!.management,
    };
    const op = await runReadmeHttpClient(gateway.url, volumeId, 'a0000000-0000-4000-8000-000000000004', env);
    expect(op).toEqual({ id: expect.any(String), state: 'SUCCEEDED', failureReason: null });
    const after = await post(
      { query: 'query ($id: ID!) { volume(id: $id) { id status } }', variables: { id: volumeId } },
      demo.headers,
    );
    expect(after.data.volume).toEqual({ id: volumeId, status: 'IN_USE' });
  }, 20_000);

  it("should drive the README's attach to SUCCEEDED, as the operation block shows", async () => {
    expect(operationId).toBeDefined();
    const query = graphqlBlocks.find((q) => q.includes('$operationId'))!;
    let op: any;
    for (let i = 0; i < 200; i++) {
      op = (await post({ query, variables: { operationId } }, demo.headers)).data.volumeOperation;
      if (!['PENDING', 'RUNNING'].includes(op.state)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(op).toMatchObject({
      id: operationId,
      kind: 'ATTACH_VOLUME',
      state: 'SUCCEEDED',
      target: {
        name: 'scratch',
        status: 'IN_USE',
        attachments: [
          { state: 'ATTACHED', consumer: { name: 'batch-1', server: { id: 'a0000000-0000-4000-8000-000000000004' } } },
        ],
      },
    });
  });
  /** A graphql-ws client with the demo's credentials; every result it receives, per subscription. */
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
  });
  const subscribeAll = (query: string): { results: any[] } => {
    const client = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: demo.headers,
    });
    clients.push(client);
    const out = { results: [] as any[] };
    client.subscribe(
      { query },
      {
        next: (r) => void out.results.push(r),
        error: (e) => void out.results.push({ error: String(e) }),
        complete: () => undefined,
      },
    );
    return out;
  };

  it('should run every subscription example over graphql-ws: SUBSCRIBED, then a change shaped as the answer shown', async () => {
    const runs = subscriptionBlocks.map((b) => ({
      ...b,
      field: Object.keys(b.answer.data)[0]!,
      ...subscribeAll(b.query),
    }));
    for (const r of runs) {
      await until(() => r.results.length > 0, `SUBSCRIBED for ${r.field}`, 30_000);
      expect(r.results[0]).toEqual({
        data: {
          [r.field]: expect.objectContaining({
            type: 'SUBSCRIBED',
            cursor: expect.any(String),
            volume: null,
            attachment: null,
          }),
        },
      });
    }
    // The Nomad claims come from the demo activity. For ci-worker-1, attach an idle volume through
    // the gateway rather than wait for the activity's Nova attach and the watcher's slow poll.
    const batchInput = (
      await post(
        { query: '{ volumes(filter: { backends: ["openstack"], name: "batch-input" }) { nodes { id } } }' },
        demo.headers,
      )
    ).data.volumes.nodes[0].id;
    const attach = await post(
      {
        query:
          'mutation ($v: ID!) { attachVolume(input: { volumeId: $v, target: { server: { serverId: "a0000000-0000-4000-8000-000000000005" } } }) { operation { id } } }',
        variables: { v: batchInput },
      },
      demo.headers,
    );
    expect(attach.errors).toBeUndefined();
    for (const r of runs) {
      await until(
        () => r.results.length > 1,
        `a ${r.field} change (the demo activity claims or releases build-cache every 10 s)`,
        30_000,
      );
      const event = r.results[1];
      expect({ field: r.field, shape: shapeOf(event) }).toEqual({ field: r.field, shape: shapeOf(r.answer) });
      expect(event.errors).toBeUndefined();
      const shown = r.answer.data[r.field];
      const got = event.data[r.field];
      if (r.field === 'volumeChanged') {
        expect(['CLAIMED', 'RELEASED']).toContain(got.type);
        expect(got.volume.nativeId).toBe(shown.volume.nativeId);
        expect(got.attachment.consumer.jobId).toBe(shown.attachment.consumer.jobId);
      } else {
        expect(['ATTACHING', 'ATTACHED', 'DETACHING', 'DETACHED']).toContain(got.type);
        expect(got.attachment.consumer).toEqual(shown.attachment.consumer);
      }
      expect(got.cursor).not.toBe(r.results[0].data[r.field].cursor);
    }
    // Before the next test restarts the gateway: these clients would reconnect on their own.
    await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
  }, 60_000);

  it("should run the README's graphql-ws client: it follows, resumes after a restart (1012), gets CURSOR_EXPIRED and follows from now", async () => {
    expect(README_WS_CLIENT).toBeDefined();
    const env = {
      OS_TOKEN: demo.kinds.openstack.token,
      NOMAD_TOKEN: demo.kinds.nomad.tokens['nomad-east']!.management,
    };
    const follower = await runReadmeWsClient(gateway.url.replace(/^http/, 'ws'), env);
    const { logs } = follower;
    try {
      await until(() => logs.includes('SUBSCRIBED'), 'SUBSCRIBED', 30_000);
      // A gateway restart: its sockets close with 1012, and its in-process log starts a new epoch.
      const port = gateway.port;
      await gateway.stop();
      await until(() => logs.includes('closed 1012'), 'close 1012', 30_000);
      gateway = await startGateway({
        config: { port, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
        registry: createRegistry(demo.backends),
        logger: createLogger('silent'),
      });
      await until(() => logs.includes('CURSOR_EXPIRED'), 'CURSOR_EXPIRED', 30_000);
      await until(() => logs.lastIndexOf('SUBSCRIBED') > logs.indexOf('CURSOR_EXPIRED'), 'a fresh SUBSCRIBED', 30_000);
      const marks = logs.filter((l) => ['SUBSCRIBED', 'closed 1012', 'CURSOR_EXPIRED'].includes(l));
      expect(marks).toEqual(['SUBSCRIBED', 'closed 1012', 'CURSOR_EXPIRED', 'SUBSCRIBED']);
      // Anything else logged is a change of a demo volume or a refused reconnect while the gateway was down.
      expect(
        logs
          .filter((l) => !marks.includes(l))
          .every((l) =>
            /^(CLAIMED|RELEASED|ATTACHING|ATTACHED|DETACHING|DETACHED|STATUS_CHANGED|UPDATED) \S+$|^closed\s*$/.test(l),
          ),
      ).toBe(true);
    } finally {
      await follower.stop();
    }
  }, 60_000);
});
