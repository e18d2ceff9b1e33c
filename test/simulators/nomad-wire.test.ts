/**
 * Wire shapes over real HTTP, compared with the from-code fixtures (field order matters: Go
 * writes struct fields in declaration order, all of them, always): the volume endpoints (list,
 * read, register, create, deregister's empty body). Plugins, snapshots, external volumes and the
 * transport are in nomad-wire-plugins.test.ts.
 */
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
