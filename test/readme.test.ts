/** The README's examples, run verbatim against demo mode (the same code `npm start` runs). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../server/app';
import { createRegistry } from '../server/backends';
import { startDemoBackends, type DemoBackends } from '../server/demo';
import { createLogger } from '../server/logger';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const graphqlBlocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
const curlBlocks = [...readme.matchAll(/```sh\n(curl [\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ' '));

describe('README examples', () => {
  let demo: DemoBackends;
  let gateway: RunningGateway;
  const post = async (body: unknown, headers: Record<string, string> = {}): Promise<any> => {
    const res = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    return res.json();
  };
  /** The first operation an example started: the README's attach (later blocks take it as `$operationId`). */
  let operationId: string | undefined;
  const remember = (data: unknown): void => {
    const found = /"operation":\{"id":"([^"]+)"/.exec(JSON.stringify(data ?? null));
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

  it('should have examples to run', () => {
    expect(graphqlBlocks.length).toBeGreaterThanOrEqual(6);
    expect(curlBlocks.length).toBeGreaterThanOrEqual(2);
  });

  it('should answer every curl example as written (headers and body)', async () => {
    for (const cmd of curlBlocks) {
      const headers = Object.fromEntries([...cmd.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
      const data = /-d '([^']*)'/.exec(cmd)![1]!;
      const body = await post(JSON.parse(data), headers);
      expect({ cmd, errors: body.errors }).toEqual({ cmd, errors: undefined });
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
      remember(body.data);
    }
  });

  it("should drive the README's attach to SUCCEEDED, as the operation block shows", async () => {
    expect(operationId).toBeDefined();
    const query = graphqlBlocks.find((q) => q.includes('$operationId'))!;
    let op: any;
    for (let i = 0; i < 200; i++) {
      op = (await post({ query, variables: { operationId } }, demo.headers)).data.operation;
      if (!['PENDING', 'RUNNING'].includes(op.state)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(op).toMatchObject({ kind: 'ATTACH_VOLUME', state: 'SUCCEEDED', target: { name: 'scratch', status: 'IN_USE', attachments: [{ state: 'ATTACHED', consumer: { name: 'batch-1' } }] } });
  });
});
