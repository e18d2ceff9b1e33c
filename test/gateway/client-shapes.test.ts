/**
 * Issue 19 item 6 through a real gateway (memory backend, over HTTP): `possibleTypes` served as
 * JSON, a stable `id` on consumers, and idempotency keys on detach, delete and extend (a retry with
 * the same key answers the first operation instead of acting again).
 */
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';
import generated from '../../schema/generated/possible-types';

let gateway: RunningGateway;
const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
  const res = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return res.json();
};

beforeAll(async () => {
  gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
    registry: createRegistry(
      loadConfig({
        GATEWAY_BACKENDS: 'lab=memory',
        GATEWAY_BACKEND_LAB_SEED_VOLUMES: '6',
        GATEWAY_BACKEND_LAB_SEED_ATTACHMENTS: '2',
        GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '0',
      }).backends,
    ),
    logger: createLogger('silent'),
    operationOptions: { pollMs: 50, maxPollMs: 100 },
    readinessProbe: false,
  });
});
afterAll(() => gateway.stop());

const VOLUMES = `{ volumes(first: 10) { nodes { id attachments { id consumer { __typename ... on VolumeHostConsumer { id hostName } } } } } }`;
const DETACH = `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { operation { id kind } } }`;

describe('possibleTypes as JSON', () => {
  it('should serve GET /graphql/possible-types.json from the running schema, as the generated file has it', async () => {
    const res = await fetch(new URL('/graphql/possible-types.json', gateway.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual(generated);
    expect(body.possibleTypes.VolumeConsumer).toEqual([
      'VolumeAllocationConsumer',
      'VolumeHostConsumer',
      'VolumeServerConsumer',
    ]);
    expect((await fetch(new URL('/graphql/possible-types.json', gateway.url), { method: 'POST' })).status).toBe(405);
  });
});

describe('consumer ids', () => {
  it('should give every consumer an id: the same on every read, unique, and not its attachment id', async () => {
    const first = (await gql(VOLUMES)).data.volumes.nodes;
    const again = (await gql(VOLUMES)).data.volumes.nodes;
    const consumers = first.flatMap((v: any) =>
      v.attachments.map((a: any) => ({ attachment: a.id, consumer: a.consumer.id })),
    );
    expect(consumers.length).toBeGreaterThanOrEqual(2);
    expect(
      consumers.every(
        (c: any) => typeof c.consumer === 'string' && c.consumer.length > 0 && c.consumer !== c.attachment,
      ),
    ).toBe(true);
    expect(new Set(consumers.map((c: any) => c.consumer)).size).toBe(consumers.length);
    expect(again.flatMap((v: any) => v.attachments.map((a: any) => a.consumer.id))).toEqual(
      consumers.map((c: any) => c.consumer),
    );
  });
});

describe('idempotency keys on every mutation that changes state', () => {
  it('should detach once for a key sent twice, answering the first operation; without a key the retry fails', async () => {
    const volumes = (await gql(VOLUMES)).data.volumes.nodes.filter((v: any) => v.attachments.length > 0);
    const [one, two] = [volumes[0], volumes[1]];
    const keyed = {
      volumeId: one.id,
      target: { host: { hostAttachmentId: one.attachments[0].id } },
      idempotencyKey: 'detach-1',
    };
    const first = await gql(DETACH, { i: keyed });
    expect(first.errors).toBeUndefined();
    const again = await gql(DETACH, { i: keyed });
    expect(again).toEqual(first);
    // The same key with another input is a reuse, not a retry.
    const reused = await gql(DETACH, {
      i: { ...keyed, target: { host: { hostAttachmentId: two.attachments[0].id } } },
    });
    expect(reused.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Without a key a retry acts again, and the attachment is gone by then.
    const plain = { volumeId: two.id, target: { host: { hostAttachmentId: two.attachments[0].id } } };
    expect((await gql(DETACH, { i: plain })).errors).toBeUndefined();
    expect(['NOT_FOUND', 'CONFLICT']).toContain((await gql(DETACH, { i: plain })).errors[0].extensions.code);
  });

  it('should delete and extend once for a key sent twice', async () => {
    const created = await gql(
      `mutation { createVolume(input: { backend: "lab", name: "keyed", sizeGiB: 1 }) { volume { id } } }`,
    );
    const id = created.data.createVolume.volume.id;
    const extend = `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { operation { id kind } } }`;
    const grow = { volumeId: id, newSizeGiB: 2, idempotencyKey: 'grow-1' };
    const grown = await gql(extend, { i: grow });
    expect(grown.errors).toBeUndefined();
    expect(await gql(extend, { i: grow })).toEqual(grown);
    const del = `mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId operation { id kind } } }`;
    const gone = await gql(del, { i: { volumeId: id, idempotencyKey: 'delete-1' } });
    expect(gone.errors).toBeUndefined();
    expect(await gql(del, { i: { volumeId: id, idempotencyKey: 'delete-1' } })).toEqual(gone);
  });
});
