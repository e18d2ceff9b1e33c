/**
 * The Nomad simulator's failure modes for the volume doctor (simulators/nomad/failures.ts), driven
 * over the `/_sim/` control API and observed over Nomad's own HTTP API: a failed allocation whose
 * claim stays until the claim GC, and a node plugin that stopped on one node.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { until } from '../support/until';
import { call, json, MGMT, NODE1, NODE2, startSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  ({ sim, url } = await startSim({ claimReleaseDelayMs: 0 }));
  sim.seedVolume({ ID: 'data', PluginID: 'aws-ebs0', ExternalID: 'vol-data', Capacity: 1073741824 });
});

afterEach(async () => {
  await sim.close();
});

const ctl = (method: string, path: string, body?: object): ReturnType<typeof call> =>
  call(url, method, `/_sim${path}`, body ? { body } : {});
const readVolume = async (): Promise<any> => json(await call(url, 'GET', '/v1/volume/csi/data', { token: MGMT }));
const readPlugin = async (id: string): Promise<any> =>
  json(await call(url, 'GET', `/v1/plugin/csi/${id}`, { token: MGMT }));
const place = async (nodeId: string): Promise<string> => {
  const r = await ctl('POST', '/allocations', { jobId: 'db', nodeId, volumes: [{ volumeId: 'data', mode: 'write' }] });
  expect(r.status).toBe(200);
  return json<{ id: string }>(r).id;
};
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

describe('a failed allocation holding its claim', () => {
  it('should keep the claim of a failed allocation until the claim GC runs', async () => {
    const alloc = await place(NODE1);
    expect((await ctl('POST', `/allocations/${alloc}/fail`, { holdClaims: true })).status).toBe(200);
    await settle();
    const held = await readVolume();
    expect(held.WriteAllocs).toEqual({ [alloc]: null });
    expect(held.Allocations.map((a: any) => [a.ID, a.ClientStatus])).toEqual([[alloc, 'failed']]);
    // The held claim still counts: a second writer is refused, as Nomad's claim rules refuse it.
    const second = await ctl('POST', '/allocations', {
      jobId: 'db2',
      nodeId: NODE2,
      volumes: [{ volumeId: 'data', mode: 'write' }],
    });
    expect({ status: second.status, body: json(second) }).toEqual({
      status: 400,
      body: { error: 'volume max claims reached' },
    });

    const gc = await ctl('POST', '/claim-gc');
    expect({ status: gc.status, body: json(gc) }).toEqual({ status: 200, body: { retried: 1 } });
    await until(async () => Object.keys((await readVolume()).WriteAllocs).length === 0, 'the claim GC to free it');
  });

  it('should let a detach release the held claim, and keep it while the allocation is only garbage-collected', async () => {
    const alloc = await place(NODE1);
    await ctl('POST', `/allocations/${alloc}/fail`, { holdClaims: true });
    expect((await ctl('DELETE', `/allocations/${alloc}`)).status).toBe(200);
    await settle();
    const gone = await readVolume();
    expect({ writers: gone.WriteAllocs, stubs: gone.Allocations }).toEqual({ writers: { [alloc]: null }, stubs: [] });

    const detach = await call(url, 'DELETE', `/v1/volume/csi/data/detach?node=${NODE1}`, { token: MGMT });
    expect(detach.status).toBe(200);
    await until(async () => Object.keys((await readVolume()).WriteAllocs).length === 0, 'the detach to free it');
  });

  it('should release a failed allocation without holdClaims as before', async () => {
    const alloc = await place(NODE1);
    await ctl('POST', `/allocations/${alloc}/fail`, {});
    await until(async () => Object.keys((await readVolume()).WriteAllocs).length === 0, 'the volume watcher');
  });

  it('should refuse bad input and unknown allocations', async () => {
    expect(json(await ctl('POST', '/allocations/nope/fail', {}))).toEqual({ error: 'allocation not found: nope' });
    const alloc = await place(NODE1);
    const bad = await ctl('POST', `/allocations/${alloc}/fail`, { holdClaims: 'yes' });
    expect({ status: bad.status, body: json(bad) }).toEqual({
      status: 400,
      body: { error: 'holdClaims must be a boolean' },
    });
  });
});

describe('a node plugin that stopped on one node', () => {
  it('should list the instance unhealthy with its own update time, and count it', async () => {
    const before = await readPlugin('aws-ebs0');
    expect(before.NodesHealthy).toBe(2);
    const r = await ctl('POST', '/plugins/aws-ebs0/node-health', { nodeId: NODE1, healthy: false });
    expect(r.status).toBe(200);
    const after = await readPlugin('aws-ebs0');
    expect({ healthy: after.NodesHealthy, expected: after.NodesExpected }).toEqual({ healthy: 1, expected: 2 });
    expect(after.Nodes[NODE1].Healthy).toBe(false);
    expect(after.Nodes[NODE1].HealthDescription).toMatch(/^failed fingerprinting with error: /);
    expect(after.Nodes[NODE2].Healthy).toBe(true);
    expect(after.ModifyIndex).toBeGreaterThan(before.ModifyIndex);
    // The volume's denormalised counts follow at read time.
    expect((await readVolume()).NodesHealthy).toBe(1);
  });

  it('should keep a terminal allocation claim on that node, fail a detach there, and free it by GC once healthy', async () => {
    const alloc = await place(NODE1);
    await ctl('POST', '/plugins/aws-ebs0/node-health', { nodeId: NODE1, healthy: false });
    await ctl('POST', `/allocations/${alloc}/status`, { desiredStatus: 'stop', clientStatus: 'complete' });
    await settle();
    expect((await readVolume()).WriteAllocs).toEqual({ [alloc]: null });

    const detach = await call(url, 'DELETE', `/v1/volume/csi/data/detach?node=${NODE1}`, { token: MGMT });
    expect({ status: detach.status, text: detach.text }).toEqual({
      status: 500,
      text: 'could not detach from node: CSI.NodeDetachVolume: plugin aws-ebs0 for type csi-node not found',
    });
    expect(json(await ctl('POST', '/claim-gc'))).toEqual({ retried: 1 });
    await settle();
    expect((await readVolume()).WriteAllocs).toEqual({ [alloc]: null });

    await ctl('POST', '/plugins/aws-ebs0/node-health', { nodeId: NODE1, healthy: true });
    expect((await readPlugin('aws-ebs0')).Nodes[NODE1].Healthy).toBe(true);
    await ctl('POST', '/claim-gc');
    await until(async () => Object.keys((await readVolume()).WriteAllocs).length === 0, 'the claim GC to free it');
  });

  it('should answer 404 for an unknown plugin or node', async () => {
    const plugin = await ctl('POST', '/plugins/nope/node-health', { nodeId: NODE1, healthy: false });
    expect({ status: plugin.status, body: json(plugin) }).toEqual({
      status: 404,
      body: { error: 'plugin not found: nope' },
    });
    const node = await ctl('POST', '/plugins/aws-ebs0/node-health', { nodeId: 'nope', healthy: false });
    expect(node.status).toBe(404);
  });
});

describe('no healthy controller', () => {
  it("should keep a terminal allocation's claim while the controller unpublish cannot be sent, and fail a detach", async () => {
    const alloc = await place(NODE1);
    sim.setPluginHealth('aws-ebs0', { controllersHealthy: 0 });
    await ctl('POST', `/allocations/${alloc}/status`, { clientStatus: 'failed' });
    await settle();
    expect((await readVolume()).WriteAllocs).toEqual({ [alloc]: null });
    const detach = await call(url, 'DELETE', `/v1/volume/csi/data/detach?node=${NODE1}`, { token: MGMT });
    expect(detach.status).toBe(500);
    expect(detach.text).toMatch(
      /^could not detach from controller: failed to find clients running controller plugin "aws-ebs0": plugin instance "[0-9a-f-]{36}" is not healthy$/,
    );
    sim.setPluginHealth('aws-ebs0', { controllersHealthy: 1 });
    await ctl('POST', '/claim-gc');
    await until(async () => Object.keys((await readVolume()).WriteAllocs).length === 0, 'the claim GC to free it');
  });
});
