/**
 * Wire shapes over real HTTP, compared with the from-code fixtures (field order matters: Go
 * writes struct fields in declaration order, all of them, always).
 */
import zlib from 'node:zlib';
import type { NomadSimulator } from '../../simulators/nomad';
import { call, fixture, json, keys, MGMT, NODE1, startSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  ({ sim, url } = await startSim());
  sim.seedVolume({
    ID: 'volume-id1',
    Name: 'volume id1',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-abcdef',
    Capacity: 10737418240,
    RequestedCapacityMin: 10737418240,
    RequestedCapacityMax: 21474836480,
    MountOptions: { FSType: 'ext4', MountFlags: ['noatime'] },
    Secrets: { token: 'hunter2' },
    Context: { partition: '0' },
    RequestedCapabilities: [
      { AttachmentMode: 'file-system', AccessMode: 'single-node-writer' },
      { AttachmentMode: 'block-device', AccessMode: 'single-node-writer' },
    ],
    RequestedTopologies: { Required: [{ Segments: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } }] },
  });
  sim.seedVolume({ ID: 'volume-id2', Name: 'volume id2', PluginID: 'aws-ebs0', ExternalID: 'vol-123456' });
  sim.placeAllocation({
    id: 'a8198d79-cfdb-6593-a999-1e9adabcba2e',
    jobId: 'example',
    taskGroup: 'cache',
    nodeId: NODE1,
    volumes: [{ volumeId: 'volume-id1', mode: 'write' }],
  });
});

afterEach(async () => {
  await sim.close();
});

describe('list: GET /v1/volumes?type=csi', () => {
  it('returns CSIVolListStub objects in the fixture field order', async () => {
    const r = await call(url, 'GET', '/v1/volumes?type=csi', { token: MGMT });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const list = json<any[]>(r);
    const fx = fixture<any[]>('volumes-list-csi.from-code.json');
    expect(list.map((v) => v.ID)).toEqual(['volume-id1', 'volume-id2']);
    for (const stub of list) expect(keys(stub)).toEqual(keys(fx[0]));
    expect(keys(list[0].Topologies[0])).toEqual(['Segments']);
    expect(list[1].Topologies).toEqual([]);
    expect(list[0]).toMatchObject({
      AccessMode: 'single-node-writer',
      AttachmentMode: 'file-system',
      CurrentWriters: 1,
      CurrentReaders: 0,
      Schedulable: true,
      ResourceExhausted: null,
      CreateTime: 0,
    });
    expect(list[1]).toMatchObject({ AccessMode: '', AttachmentMode: '', CurrentWriters: 0, ModifyTime: 0 });
    expect(r.headers['x-nomad-index']).toMatch(/^\d+$/);
    expect(r.headers['x-nomad-knownleader']).toBe('true');
    expect(r.headers['x-nomad-lastcontact']).toBe('0');
    expect(r.headers['x-nomad-nexttoken']).toBeUndefined();
  });

  it('answers [] without type and ignores query validation then', async () => {
    const r = await call(url, 'GET', '/v1/volumes?per_page=abc', { token: MGMT });
    expect(r.status).toBe(200);
    expect(r.text).toBe('[]');
    expect(r.headers['x-nomad-index']).toBeUndefined();
  });

  it('writes nanosecond timestamps beyond 2^53 digit for digit', async () => {
    const list = (await call(url, 'GET', '/v1/volumes?type=csi', { token: MGMT })).text;
    const read = (await call(url, 'GET', '/v1/volume/csi/volume-id1', { token: MGMT })).text;
    const m1 = /"ID":"volume-id1".*?"ModifyTime":(\d+)/.exec(list);
    const m2 = /"CreateTime":0,"ModifyTime":(\d+),"Allocations"/.exec(read);
    expect(m1).not.toBeNull();
    expect(m2![1]).toBe(m1![1]);
    const ns = BigInt(m1![1]!);
    expect(ns > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(BigInt(Number(m1![1])) === ns && ns % 1000n !== 0n).toBe(false); // not representable as a double
    const nowNs = BigInt(Date.now()) * 1000000n;
    expect(ns > nowNs - 60_000_000_000n && ns <= nowNs + 1_000_000_000n).toBe(true);
  });

  it('pretty-prints with ?pretty and a trailing newline', async () => {
    const r = await call(url, 'GET', '/v1/volumes?type=csi&pretty', { token: MGMT });
    expect(r.text.startsWith('[\n    {\n        "ID": "volume-id1",')).toBe(true);
    expect(r.text.endsWith('}\n]\n')).toBe(true);
    const r0 = await call(url, 'GET', '/v1/volumes?type=csi&pretty=0', { token: MGMT });
    expect(r0.text.startsWith('[{"ID"')).toBe(true);
  });
});

describe('read: GET /v1/volume/csi/:id', () => {
  it('returns the full CSIVolume in the fixture field order with sanitised fields', async () => {
    const r = await call(url, 'GET', '/v1/volume/csi/volume-id1', { token: MGMT });
    expect(r.status).toBe(200);
    const v = json(r);
    const fx = fixture('volume-read.from-code.json');
    expect(keys(v)).toEqual(keys(fx));
    expect(keys(v.Allocations[0])).toEqual(keys(fx.Allocations[0]));
    expect(keys(v.Allocations[0].DesiredTransition)).toEqual(keys(fx.Allocations[0].DesiredTransition));
    expect(keys(v.MountOptions)).toEqual(['FSType', 'MountFlags']);
    expect(keys(v.RequestedCapabilities[0])).toEqual(keys(fx.RequestedCapabilities[0]));
    expect(v.Secrets).toBeNull();
    expect(v.MountOptions).toEqual({ FSType: 'ext4', MountFlags: ['[REDACTED]'] });
    expect(v.WriteAllocs).toEqual({ 'a8198d79-cfdb-6593-a999-1e9adabcba2e': null });
    expect(v.ReadAllocs).toEqual({});
    expect(v.Context).toEqual({ partition: '0' });
    expect(v.Parameters).toEqual({});
    expect(v.RequestedTopologies).toEqual({
      Required: [{ Segments: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } }],
      Preferred: null,
    });
    expect(v.Topologies).toEqual([{ Segments: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } }]);
    expect(v).toMatchObject({
      ResourceExhausted: null,
      CreateTime: 0,
      ProviderVersion: 'v1.38.1',
      ControllerRequired: true,
      ControllersHealthy: 1,
      NodesHealthy: 2,
      NodesExpected: 2,
    });
    expect(v.Allocations[0]).toMatchObject({
      ID: 'a8198d79-cfdb-6593-a999-1e9adabcba2e',
      Name: 'example.cache[0]',
      NodeName: 'client-1',
      ClientStatus: 'running',
      TaskStates: null,
    });
    expect(r.text).not.toContain('hunter2');
    expect(r.text).not.toContain('noatime');
  });

  it('404s in plain text with meta headers, and with namespace=*', async () => {
    for (const p of ['/v1/volume/csi/nope', '/v1/volume/csi/volume-id1?namespace=*']) {
      const r = await call(url, 'GET', p, { token: MGMT });
      expect(r.status).toBe(404);
      expect(r.text).toBe('volume not found');
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(r.headers['x-nomad-index']).toMatch(/^\d+$/);
      expect(r.headers['x-nomad-knownleader']).toBe('true');
    }
  });
});

describe('register and create', () => {
  it('PUT /v1/volume/csi/:id replies with the request objects after validation', async () => {
    const r = await call(url, 'PUT', '/v1/volume/csi/ignored-path-id', {
      token: MGMT,
      body: {
        Volumes: [
          {
            ID: 'volume-id3',
            Name: 'volume one',
            ExternalID: 'vol-abcdef',
            PluginID: 'aws-ebs0',
            RequestedCapabilities: [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }],
          },
        ],
      },
    });
    expect(r.status).toBe(200);
    const body = json(r);
    const fx = fixture('volume-register-response.from-code.json');
    expect(keys(body)).toEqual(keys(fx));
    expect(keys(body.Volumes[0])).toEqual(keys(fx.Volumes[0]));
    expect(body.Volumes[0]).toMatchObject({
      ID: 'volume-id3',
      CreateIndex: 0,
      ModifyIndex: 0,
      Schedulable: false,
      ControllerRequired: false,
      Provider: 'ebs.csi.aws.com',
      ProviderVersion: 'v1.38.1',
      Topologies: [],
      MountOptions: { FSType: '', MountFlags: null },
      Parameters: {},
      Context: {},
      Allocations: [],
    });
    expect(body).toMatchObject({ Warnings: '', LastContact: 0, KnownLeader: true, NextToken: '' });
    expect(String(body.Index)).toBe(r.headers['x-nomad-index']);
    // The path id is ignored: the volume exists under its body id.
    expect((await call(url, 'GET', '/v1/volume/csi/volume-id3', { token: MGMT })).status).toBe(200);
    expect((await call(url, 'GET', '/v1/volume/csi/ignored-path-id', { token: MGMT })).status).toBe(404);
  });

  it('PUT /v1/volume/csi/:id/create provisions a provider volume', async () => {
    const r = await call(url, 'PUT', '/v1/volume/csi/x/create', {
      token: MGMT,
      body: {
        Volumes: [
          {
            ID: 'created',
            Name: 'volume one',
            PluginID: 'aws-ebs0',
            RequestedCapacityMin: 10737418240,
            RequestedCapacityMax: 21474836480,
            RequestedCapabilities: [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }],
            MountOptions: { FSType: 'ext4', MountFlags: ['ro'] },
          },
        ],
      },
    });
    expect(r.status).toBe(200);
    const body = json(r);
    const fx = fixture('volume-create-response.from-code.json');
    expect(keys(body)).toEqual(keys(fx));
    expect(keys(body.Volumes[0])).toEqual(keys(fx.Volumes[0]));
    const v = body.Volumes[0];
    expect(v.ExternalID).toMatch(/^vol-[0-9a-f]{17}$/);
    expect(v).toMatchObject({
      Capacity: 10737418240,
      Context: {},
      Topologies: [{ Segments: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } }],
      MountOptions: { FSType: 'ext4', MountFlags: ['[REDACTED]'] },
      CreateIndex: 0,
    });
    const ext = json(await call(url, 'GET', '/v1/volumes/external?plugin_id=aws-ebs0', { token: MGMT }));
    expect(ext.Volumes.map((e: { ExternalID: string }) => e.ExternalID)).toContain(v.ExternalID);
  });
});

describe('empty 200 bodies', () => {
  it('deregister answers 200 with no body and no Content-Type', async () => {
    const r = await call(url, 'DELETE', '/v1/volume/csi/volume-id2', { token: MGMT });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers['content-type']).toBeUndefined();
    expect(r.headers['content-length']).toBe('0');
    expect(r.headers['x-nomad-index']).toMatch(/^\d+$/);
    expect(r.headers['vary']).toBe('Accept-Encoding');
  });

  it('GET /v1/plugins?type=other answers an empty 200', async () => {
    const r = await call(url, 'GET', '/v1/plugins?type=host', { token: MGMT });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers['content-type']).toBeUndefined();
  });
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
