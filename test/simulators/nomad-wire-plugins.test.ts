/**
 * Wire shapes over real HTTP, compared with the from-code fixtures (field order matters: Go
 * writes struct fields in declaration order, all of them, always): plugins, snapshots and external
 * volumes (the plugin-scoped endpoints), and the transport (leader, gzip as Nomad compresses).
 */
import zlib from 'node:zlib';
import type { NomadSimulator } from '../../simulators/nomad';
import { call, fixture, json, keys, MGMT, startWireSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  ({ sim, url } = await startWireSim());
});

afterEach(async () => {
  await sim.close();
});

describe('plugins', () => {
  it('GET /v1/plugin/csi/:id is a single object in the fixture field order', async () => {
    const r = await call(url, 'GET', '/v1/plugin/csi/aws-ebs0', { token: MGMT });
    const p = json(r);
    const fx = fixture('plugin-read.from-code.json');
    expect(keys(p)).toEqual(keys(fx));
    const ctrl = Object.values(p.Controllers)[0] as Record<string, any>;
    const node = Object.values(p.Nodes)[0] as Record<string, any>;
    const fxCtrl = Object.values(fx.Controllers)[0] as Record<string, any>;
    const fxNode = Object.values(fx.Nodes)[0] as Record<string, any>;
    expect(keys(ctrl)).toEqual(keys(fxCtrl));
    expect(keys(node)).toEqual(keys(fxNode));
    expect(keys(ctrl.ControllerInfo)).toEqual(keys(fxCtrl.ControllerInfo));
    expect(keys(node.NodeInfo)).toEqual(keys(fxNode.NodeInfo));
    expect(node.NodeInfo.ID).toMatch(/^i-[0-9a-f]{17}$/);
    expect(p.ControllerJobs).toEqual({
      default: {
        'plugin-aws-ebs0-controller': { Namespace: 'default', ID: 'plugin-aws-ebs0-controller', Expected: 1 },
      },
    });
    expect(p).toMatchObject({ ControllersHealthy: 1, ControllersExpected: 1, NodesHealthy: 2, NodesExpected: 2 });
    expect(p.Allocations).toHaveLength(3);
    expect(ctrl.UpdateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const other = json(await call(url, 'GET', '/v1/plugin/csi/aws-ebs0?namespace=other', { token: MGMT }));
    expect(other.Allocations).toBeNull();
  });

  it('GET /v1/plugins?type=csi lists stubs ordered by ID', async () => {
    const r = await call(url, 'GET', '/v1/plugins?type=csi', { token: MGMT });
    const list = json<any[]>(r);
    expect(list.map((p) => p.ID)).toEqual(['aws-ebs0', 'hostpath']);
    expect(keys(list[0])).toEqual([
      'ID',
      'Provider',
      'ControllerRequired',
      'ControllersHealthy',
      'ControllersExpected',
      'NodesHealthy',
      'NodesExpected',
      'CreateIndex',
      'ModifyIndex',
    ]);
    const none = await call(url, 'GET', '/v1/plugins', { token: MGMT });
    expect(none.text).toBe('[]');
  });
});

describe('snapshots and external volumes', () => {
  it('creates and lists snapshots with provider-only fields', async () => {
    const r = await call(url, 'POST', '/v1/volumes/snapshot', {
      token: MGMT,
      body: { Snapshots: [{ SourceVolumeID: 'volume-id1', Name: 'snap' }] },
    });
    expect(r.status).toBe(200);
    const body = json(r);
    const fx = fixture('snapshot-create-response.from-code.json');
    expect(keys(body)).toEqual(keys(fx));
    expect(keys(body.Snapshots[0])).toEqual(keys(fx.Snapshots[0]));
    expect(body.Snapshots[0]).toMatchObject({
      ExternalSourceVolumeID: 'vol-abcdef',
      SizeBytes: 10737418240,
      IsReady: false,
      SourceVolumeID: '',
      PluginID: '',
      Name: '',
      Secrets: null,
      Parameters: null,
    });
    expect(body.Snapshots[0].ID).toMatch(/^snap-[0-9a-f]{17}$/);
    expect(r.headers['x-nomad-index']).toBe('0');
    expect(r.headers['x-nomad-knownleader']).toBe('false');

    const list = await call(url, 'GET', '/v1/volumes/snapshot?plugin_id=aws-ebs0', { token: MGMT });
    const lb = json(list);
    const lfx = fixture('snapshots-list.from-code.json');
    expect(keys(lb)).toEqual(keys(lfx));
    expect(keys(lb.Snapshots[0])).toEqual(keys(lfx.Snapshots[0]));
    expect(lb.Snapshots[0]).toMatchObject({ PluginID: 'aws-ebs0', SourceVolumeID: '' });
    expect(list.headers['x-nomad-index']).toBe('0');

    const del = await call(
      url,
      'DELETE',
      `/v1/volumes/snapshot?plugin_id=aws-ebs0&snapshot_id=${body.Snapshots[0].ID}`,
      { token: MGMT },
    );
    expect(del.status).toBe(200);
    expect(del.text).toBe('');
    expect(json(await call(url, 'GET', '/v1/volumes/snapshot?plugin_id=aws-ebs0', { token: MGMT })).Snapshots).toEqual(
      [],
    );
  });

  it('lists provider volumes with the plugin token in the body, never in the header', async () => {
    sim.addExternalVolume('aws-ebs0', {
      ExternalID: 'vol-37ac485e',
      CapacityBytes: 1000000,
      PublishedExternalNodeIDs: ['i-12345'],
    });
    const fx = fixture('volumes-external-list.from-code.json');
    const p1 = await call(url, 'GET', '/v1/volumes/external?plugin_id=aws-ebs0&per_page=2', { token: MGMT });
    const b1 = json(p1);
    expect(keys(b1)).toEqual(keys(fx));
    expect(keys(b1.Volumes[0])).toEqual(keys(fx.Volumes[0]));
    expect(b1.Volumes.map((v: { ExternalID: string }) => v.ExternalID)).toEqual(['vol-abcdef', 'vol-123456']);
    expect(b1.Volumes[0].PublishedExternalNodeIDs).toHaveLength(1); // attached by the write claim
    expect(b1.NextToken).toBe('vol-37ac485e');
    expect(p1.headers['x-nomad-nexttoken']).toBeUndefined();
    expect(p1.headers['x-nomad-knownleader']).toBe('false');
    const b2 = json(
      await call(url, 'GET', `/v1/volumes/external?plugin_id=aws-ebs0&per_page=2&next_token=${b1.NextToken}`, {
        token: MGMT,
      }),
    );
    expect(b2.Volumes).toEqual([fx.Volumes[0]]);
    expect(b2.NextToken).toBe('');
  });
});

describe('transport', () => {
  it('GET /v1/status/leader answers a JSON string without meta headers or ACL', async () => {
    const r = await call(url, 'GET', '/v1/status/leader');
    expect(r.status).toBe(200);
    expect(r.text).toBe('"127.0.0.1:4647"');
    expect(r.headers['x-nomad-index']).toBeUndefined();
  });

  it('compresses for clients that ask, like gorilla CompressHandler', async () => {
    const r = await call(url, 'GET', '/v1/volume/csi/volume-id1', {
      token: MGMT,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(r.headers['content-encoding']).toBe('gzip');
    const again = await (
      await import('undici')
    ).request(url + '/v1/volume/csi/volume-id1', { headers: { 'x-nomad-token': MGMT, 'accept-encoding': 'gzip' } });
    const raw = Buffer.from(await again.body.arrayBuffer());
    expect(JSON.parse(zlib.gunzipSync(raw).toString()).ID).toBe('volume-id1');
    const del = await (
      await import('undici')
    ).request(url + '/v1/volume/csi/volume-id2', {
      method: 'DELETE',
      headers: { 'x-nomad-token': MGMT, 'accept-encoding': 'gzip' },
    });
    const delBody = Buffer.from(await del.body.arrayBuffer());
    expect(del.headers['content-type']).toBe('application/x-gzip');
    expect(zlib.gunzipSync(delBody).length).toBe(0);
  });
});
