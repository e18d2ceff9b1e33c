/** The README's examples, run verbatim against demo mode (the same code `npm start` runs). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, TypeInfo, isObjectType, parse, visit, visitWithTypeInfo, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { startGateway, type RunningGateway } from '../server/app';
import { createRegistry } from '../server/backends';
import { startDemoBackends, type DemoBackends } from '../server/demo';
import { createLogger } from '../server/logger';
import { buildGatewaySchema } from '../server/schema';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const graphqlBlocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
/** Each curl example, with the answer the README shows right after it (a ```json block), if any. */
const curlBlocks = [...readme.matchAll(/```sh\n(curl [\s\S]*?)```(?:\s*```json\n([\s\S]*?)```)?/g)].map((m) => ({
  cmd: m[1]!.replace(/\\\n\s*/g, ' '),
  answer: m[2] === undefined ? undefined : (JSON.parse(m[2]) as unknown),
}));
/** The JavaScript client example: the first ```js block. */
const jsClient = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
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
      if (s.kind === Kind.INLINE_FRAGMENT && (!s.typeCondition || s.typeCondition.name.value === type)) return selected(s.selectionSet, type);
      return [];
    });
  visit(
    parse(query),
    visitWithTypeInfo(typeInfo, {
      SelectionSet(node) {
        const type = typeInfo.getParentType();
        if (isObjectType(type) && type.getFields().id && !type.name.startsWith('_') && !selected(node, type.name).includes('id')) {
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
    const res = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
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
    demo = await startDemoBackends();
    gateway = await startGateway({ config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 }, registry: createRegistry(demo.backends), logger: createLogger('silent') });
  });
  afterAll(async () => {
    await gateway.stop();
    await demo.stop();
  });

  it('should have examples to run, and answers to compare', () => {
    expect(graphqlBlocks.length).toBeGreaterThanOrEqual(6);
    expect(curlBlocks.length).toBeGreaterThanOrEqual(2);
    expect(curlBlocks.filter((c) => c.answer !== undefined).length).toBeGreaterThanOrEqual(2);
  });

  it('should select id on every object that has one, in every example', () => {
    const schema = buildGatewaySchema();
    const queries = [...graphqlBlocks, ...curlBlocks.map((c) => curlQuery(c.cmd))];
    expect(queries.map((q) => ({ q, missing: missingIds(schema, q) }))).toEqual(queries.map((q) => ({ q, missing: [] })));
    // The check itself finds what it is for.
    expect(missingIds(schema, '{ volumes { nodes { name attachments { state } } } }')).toEqual(['Volume at line 1', 'VolumeAttachment at line 1']);
  });

  it('should answer every curl example as written (headers and body), as the answer shown after it', async () => {
    for (const { cmd, answer } of curlBlocks) {
      const headers = Object.fromEntries([...cmd.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
      const data = /-d '([^']*)'/.exec(cmd)![1]!;
      const body = await post(JSON.parse(data), headers);
      if (answer === undefined) expect({ cmd, errors: body.errors }).toEqual({ cmd, errors: undefined });
      else expect({ cmd, body }).toEqual({ cmd, body: answer });
      remember(body.data);
    }
  });

  it('should answer every GraphQL block without errors, in order (after the curl examples, whose attach the operation block reads)', async () => {
    const id = (await post({ query: '{ volumeByNativeId(backend: "nomad-east", nativeId: "postgres-data") { id } }' })).data.volumeByNativeId.id;
    for (const query of graphqlBlocks) {
      const variables = { ...(query.includes('$id') ? { id } : {}), ...(query.includes('$operationId') ? { operationId } : {}) };
      const body = await post({ query, variables }, demo.headers);
      expect({ query, errors: body.errors }).toEqual({ query, errors: undefined });
      expect(body.data).toBeDefined();
    }
  });

  it("should run the README's JavaScript client: it attaches and waits for the end", async () => {
    expect(jsClient).toContain('attachVolume');
    // Demo region: golden-image and batch-1 (simulators/openstack/demo.ts); the other examples leave both alone.
    const volumeId = (await post({ query: '{ volumes(filter: { backends: ["openstack"], name: "golden-image" }) { nodes { id } } }' }, demo.headers)).data.volumes.nodes[0].id;
    const env = { OS_TOKEN: demo.openstack.token, NOMAD_TOKEN: demo.tokens['nomad-east']!.management };
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;
    const run = new AsyncFunction('volumeId', 'serverId', 'process', `${jsClient!.replace('http://localhost:4000/graphql', gateway.url)}\nreturn op;`);
    const op = await run(volumeId, 'a0000000-0000-4000-8000-000000000004', { env });
    expect(op).toEqual({ id: expect.any(String), state: 'SUCCEEDED', failureReason: null });
    const after = await post({ query: 'query ($id: ID!) { volume(id: $id) { id status } }', variables: { id: volumeId } }, demo.headers);
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
      target: { name: 'scratch', status: 'IN_USE', attachments: [{ state: 'ATTACHED', consumer: { name: 'batch-1', server: { id: 'a0000000-0000-4000-8000-000000000004' } } }] },
    });
  });
});
