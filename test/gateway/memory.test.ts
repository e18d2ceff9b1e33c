/**
 * The memory backend through a real gateway over HTTP and graphql-ws, configured as the server
 * configures it (`GATEWAY_BACKENDS=lab=memory` and its `GATEWAY_BACKEND_LAB_*` settings, built by
 * the module registry; no server file names it): its kind
 * and capabilities, volumes with host attachments and memory details, an attach accepted at once
 * and SUCCEEDED after the delay, the watcher's live events, and access denial from its tokens.
 */
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';
import { waitOperation, type GatewayUnderTest } from '../support/harness';
import { ackedClient, eventOf, subscribed } from '../ws/helpers';

const started: RunningGateway[] = [];
afterAll(async () => {
  for (const g of started) await g.stop();
});

/** A gateway serving backend `lab` of kind memory with its own settings `GATEWAY_BACKEND_LAB_<name>`. */
async function gatewayWith(settings: Record<string, string>): Promise<GatewayUnderTest> {
  const env = {
    GATEWAY_BACKENDS: 'lab=memory',
    ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [`GATEWAY_BACKEND_LAB_${k}`, v])),
  };
  const gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
    registry: createRegistry(loadConfig(env).backends),
    logger: createLogger('silent'),
    operationOptions: { pollMs: 50, maxPollMs: 100 },
    readinessProbe: false,
  });
  started.push(gateway);
  return {
    gateway,
    async gql(query, variables, headers = {}) {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
}

const VOLUMES = `query($f: VolumeFilter) { volumes(first: 100, filter: $f) {
  nodes { id name status sizeBytes
    details { __typename ... on MemoryVolumeDetails { snapshotCount metadata { key value } } }
    attachments { id state access consumer { __typename ... on VolumeHostConsumer { hostName } } } }
  omittedBackends { backend { id } reason code } } }`;
const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } attachment { state consumer { ... on VolumeHostConsumer { hostName } } } } }`;

describe('memory backend through the gateway (open data, 300 ms changes)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await gatewayWith({ SEED_VOLUMES: '10', SEED_ATTACHMENTS: '2', OPERATION_DELAY_MS: '300' });
  });

  it('should show the backend as MEMORY with its capabilities, and its volumes through the same schema', async () => {
    const b = await gw.gql(`{ storageBackends { id kind requiresCredential capabilities health { status } } }`);
    expect(b.body.data.storageBackends).toEqual([
      {
        id: 'lab',
        kind: 'MEMORY',
        requiresCredential: false,
        capabilities: expect.arrayContaining(['LIST_VOLUMES', 'ATTACH_VOLUME', 'TRACKED_OPERATIONS']),
        health: { status: 'UP' },
      },
    ]);
    const v = await gw.gql(VOLUMES);
    expect(v.body.errors).toBeUndefined();
    expect(v.body.data.volumes.nodes).toHaveLength(10);
    expect(v.body.data.volumes.nodes[1]).toMatchObject({
      name: 'volume 1',
      status: 'IN_USE',
      details: { __typename: 'MemoryVolumeDetails', snapshotCount: 0, metadata: [{ key: 'tier', value: 'silver' }] },
      attachments: [
        {
          state: 'ATTACHED',
          access: 'READ_WRITE',
          consumer: { __typename: 'VolumeHostConsumer', hostName: 'host-01' },
        },
        { state: 'ATTACHED', access: 'READ_ONLY', consumer: { __typename: 'VolumeHostConsumer', hostName: 'host-02' } },
      ],
    });
  });

  it('should accept an attach at once, report ATTACHING then ATTACHED live, and finish its operation after the delay', async () => {
    const id = (await gw.gql(VOLUMES)).body.data.volumes.nodes[0].id;
    const c = await ackedClient(gw.gateway.url.replace('http', 'ws'), {});
    await subscribed(c, 's1', 'subscription { volumeChanged { type volumeId attachment { state } } }');
    const res = await gw.gql(ATTACH, { i: { volumeId: id, target: { host: { connector: { host: 'lab-host' } } } } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.attachVolume.attachment).toEqual({ state: 'ATTACHING', consumer: { hostName: 'lab-host' } });
    expect(['PENDING', 'RUNNING']).toContain(res.body.data.attachVolume.operation.state);
    expect(await eventOf(c, 's1', 'ATTACHING')).toMatchObject({ volumeId: id, attachment: { state: 'ATTACHING' } });
    expect(await eventOf(c, 's1', 'ATTACHED')).toMatchObject({ volumeId: id, attachment: { state: 'ATTACHED' } });
    expect(await waitOperation(gw, res.body.data.attachVolume.operation.id, {})).toMatchObject({
      state: 'SUCCEEDED',
      kind: 'ATTACH_VOLUME',
    });
    c.ws.close();
  });
  it('should create and delete a volume, each operation SUCCEEDED after the delay', async () => {
    const created = await gw.gql(
      `mutation { createVolume(input: { backend: "lab", namespace: "default", name: "made here", sizeGiB: 2, metadata: [{ key: "k", value: "v" }] }) { volume { id status sizeBytes details { ... on MemoryVolumeDetails { metadata { key value } } } } operation { id state } } }`,
    );
    expect(created.body.errors).toBeUndefined();
    const { volume, operation } = created.body.data.createVolume;
    expect(volume).toMatchObject({
      status: 'CREATING',
      sizeBytes: 2 * 1024 ** 3,
      details: { metadata: [{ key: 'k', value: 'v' }] },
    });
    expect(await waitOperation(gw, operation.id, {})).toMatchObject({ state: 'SUCCEEDED', kind: 'CREATE_VOLUME' });
    expect(
      (await gw.gql(`query($id: ID!) { volume(id: $id) { status } }`, { id: volume.id })).body.data.volume,
    ).toEqual({ status: 'AVAILABLE' });
    const deleted = await gw.gql(
      `mutation($id: ID!) { deleteVolume(input: { volumeId: $id }) { deletedId operation { id } } }`,
      { id: volume.id },
    );
    expect(await waitOperation(gw, deleted.body.data.deleteVolume.operation.id, {})).toMatchObject({
      state: 'SUCCEEDED',
      kind: 'DELETE_VOLUME',
    });
    expect(
      (await gw.gql(`query($id: ID!) { volume(id: $id) { status } }`, { id: volume.id })).body.data.volume,
    ).toBeNull();
  });
});

describe('memory backend through the gateway: tokens from its data', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await gatewayWith({ OPERATION_DELAY_MS: '0' });
  });
  // The module's header only: the gateway finds it from the module registry.
  const token = (t: string) => ({ 'X-Memory-Token': t });

  it('should leave the backend out without a token, list only granted namespaces, and refuse the rest', async () => {
    const none = await gw.gql(VOLUMES);
    expect(none.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'lab' }, reason: 'NO_CREDENTIAL', code: null },
    ]);
    const viewer = await gw.gql(VOLUMES, {}, token('lab-viewer'));
    expect(new Set(viewer.body.data.volumes.nodes.map((n: { name: string }) => n.name))).toEqual(
      new Set(['postgres data', 'shared assets', 'scratch']),
    );
    const dev = await gw.gql(
      `{ volume(id: "${Buffer.from(JSON.stringify(['Volume', 'lab', 'dev', 'dev-cache'])).toString('base64url')}") { name } }`,
      {},
      token('lab-viewer'),
    );
    expect(dev.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', backend: 'lab' });
    const bad = await gw.gql(VOLUMES, { f: { backends: ['lab'] } }, token('not-a-token'));
    expect(bad.body.data?.volumes?.omittedBackends ?? []).toEqual(
      expect.arrayContaining([expect.objectContaining({ backend: { id: 'lab' }, code: 'UNAUTHENTICATED' })]),
    );
  });
});
