import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  calls,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

const admin = { 'x-nomad-token': MGMT };

describe('batching and de-duplication of backend reads', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 100);
    for (let i = 0; i < 100; i += 10) {
      sim.placeAllocation({
        jobId: `job-${i}`,
        nodeId: 'node-1111',
        volumes: [
          {
            volumeId: `vol-${String(i).padStart(3, '0')}`,
            mode: 'write',
            accessMode: 'single-node-writer',
            attachmentMode: 'file-system',
          },
        ],
      });
    }
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterAll(disposeAll);
  beforeEach(() => sim.clearRequests());

  it('should cost one list call for volumes(first: 100) without detail fields', async () => {
    const res = await gw.gql(
      `{ volumes(first: 100) { nodes { id name status details { ... on NomadVolumeDetails { currentWriters } } } } }`,
      {},
      admin,
    );
    expect(res.body.data.volumes.nodes).toHaveLength(100);
    expect(calls(sim)).toEqual(['GET /v1/volumes']);
  });

  it('should cost one list call plus one read per volume for volumes(first: 100) { attachments }, each volume read once', async () => {
    const res = await gw.gql(
      `{ volumes(first: 100) { nodes { id sizeBytes details { ... on NomadVolumeDetails { mountOptions { fsType } } } attachments { state consumer { ... on VolumeAllocationConsumer { jobId } } } } } }`,
      {},
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.volumes.nodes;
    expect(nodes).toHaveLength(100);
    expect(nodes.filter((n: any) => n.attachments.length === 1)).toHaveLength(10);
    const log = calls(sim);
    expect(log.filter((c) => c === 'GET /v1/volumes')).toHaveLength(1);
    const reads = log.filter((c) => c.startsWith('GET /v1/volume/csi/'));
    expect(reads).toHaveLength(100);
    expect(new Set(reads).size).toBe(100);
  });

  it('should read a volume once when one request asks for it several times', async () => {
    const list = await gw.gql(`{ volumes(first: 1) { nodes { id } } }`, {}, admin);
    const id = list.body.data.volumes.nodes[0].id;
    sim.clearRequests();
    const res = await gw.gql(
      `query($id: ID!, $reps: [_Any!]!) { a: volume(id: $id) { sizeBytes } b: volume(id: $id) { attachments { state } } c: _entities(representations: $reps) { ... on Volume { id } } }`,
      { id, reps: [{ __typename: 'Volume', id }] },
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    expect(calls(sim)).toEqual(['GET /v1/volume/csi/vol-000']);
  });

  it('should read each plugin once for a list of volumes that all name it', async () => {
    const res = await gw.gql(
      `{ volumes(first: 100) { nodes { details { ... on NomadVolumeDetails { plugin { version } } } } } }`,
      {},
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    expect(calls(sim)).toEqual(['GET /v1/volumes', 'GET /v1/plugin/csi/aws-ebs0']);
  });

  it('should not share cached reads between requests', async () => {
    await gw.gql(`{ volumeByNativeId(backend: "east", nativeId: "vol-005") { sizeBytes } }`, {}, admin);
    await gw.gql(`{ volumeByNativeId(backend: "east", nativeId: "vol-005") { sizeBytes } }`, {}, admin);
    expect(calls(sim)).toEqual(['GET /v1/volume/csi/vol-005', 'GET /v1/volume/csi/vol-005']);
  });

  it('should run at most maxConcurrentReads volume reads at once, and more than one', async () => {
    const capped = await startGatewayFor([{ id: 'east', url: sim.url }], { maxConcurrentReads: 4 });
    sim.setLatency(40);
    let maxInFlight = 0;
    const sample = setInterval(() => {
      maxInFlight = Math.max(maxInFlight, sim.requests().filter((r) => r.status === 0).length);
    }, 2);
    try {
      const res = await capped.gql(`{ volumes(first: 40) { nodes { sizeBytes } } }`, {}, admin);
      expect(res.body.data.volumes.nodes).toHaveLength(40);
    } finally {
      clearInterval(sample);
      sim.setLatency(0);
    }
    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(maxInFlight).toBeGreaterThan(1);
  });
});
