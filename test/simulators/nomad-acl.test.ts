/**
 * ACL scoping (hashicorp/nomad command/agent/http.go and the CSI RPCs' checks in
 * nomad/csi_endpoint.go): namespace capabilities, `namespace=*` narrowing, plugin read, token
 * headers, anonymous policy and ACLs disabled — on the demo cluster.
 */
import { NomadSimulator, seedDemoCluster } from '../../simulators/nomad';
import { call, json } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;
let mgmt: string;
let ro: string;

beforeAll(async () => {
  sim = new NomadSimulator({ acl: { enabled: true, anonymousRead: ['analytics'] } });
  ({ managementToken: mgmt, readOnlyToken: ro } = seedDemoCluster(sim, 'east'));
  url = await sim.listen();
});

afterAll(async () => {
  await sim.close();
});

const ids = (r: { text: string }): string[] => (JSON.parse(r.text) as Array<{ ID: string }>).map((v) => v.ID);

describe('read-only token for namespace analytics', () => {
  it('lists and reads only analytics', async () => {
    expect(ids(await call(url, 'GET', '/v1/volumes?type=csi&namespace=analytics', { token: ro }))).toEqual([
      'notebooks',
      'spark-shuffle',
      'warehouse-scratch',
    ]);
    expect((await call(url, 'GET', '/v1/volume/csi/notebooks?namespace=analytics', { token: ro })).status).toBe(200);
    for (const p of [
      '/v1/volumes?type=csi',
      '/v1/volume/csi/postgres-data',
      '/v1/volumes/external?plugin_id=aws-ebs0',
    ]) {
      const r = await call(url, 'GET', p, { token: ro });
      expect({ p, status: r.status, text: r.text }).toEqual({ p, status: 403, text: 'Permission denied' });
    }
  });

  it('namespace=* narrows to the namespaces the token may list', async () => {
    expect(ids(await call(url, 'GET', '/v1/volumes?type=csi&namespace=*', { token: ro }))).toEqual([
      'notebooks',
      'spark-shuffle',
      'warehouse-scratch',
    ]);
    expect(ids(await call(url, 'GET', '/v1/volumes?type=csi&namespace=*', { token: mgmt }))).toHaveLength(7);
  });

  it('cannot write, even in its own namespace', async () => {
    const body = {
      Volumes: [
        {
          ID: 'x',
          PluginID: 'hostpath',
          RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
        },
      ],
    };
    const writes: Array<[string, string, object?]> = [
      ['PUT', '/v1/volume/csi/x?namespace=analytics', body],
      ['PUT', '/v1/volume/csi/x/create?namespace=analytics', body],
      ['DELETE', '/v1/volume/csi/notebooks?namespace=analytics'],
      ['DELETE', '/v1/volume/csi/notebooks/delete?namespace=analytics'],
      ['DELETE', '/v1/volume/csi/notebooks/detach?namespace=analytics&node=x'],
      ['POST', '/v1/volumes/snapshot?namespace=analytics', { Snapshots: [{ SourceVolumeID: 'notebooks' }] }],
      ['DELETE', '/v1/volumes/snapshot?namespace=analytics&plugin_id=aws-ebs0&snapshot_id=x'],
    ];
    for (const [method, p, b] of writes) {
      const r = await call(url, method, p, { token: ro, ...(b ? { body: b } : {}) });
      expect({ p, status: r.status, text: r.text }).toEqual({ p, status: 403, text: 'Permission denied' });
    }
  });

  it('may read plugins (plugin read) but sees plugin allocs only with read-job in the namespace', async () => {
    expect(json<unknown[]>(await call(url, 'GET', '/v1/plugins?type=csi', { token: ro }))).toHaveLength(2);
    const p = json(await call(url, 'GET', '/v1/plugin/csi/aws-ebs0', { token: ro }));
    expect(p.Allocations).toBeNull();
  });

  it('subscribes to CSIVolume events in analytics but not across all namespaces', async () => {
    const denied = await call(url, 'GET', '/v1/event/stream?topic=CSIVolume&namespace=*', { token: ro });
    expect([denied.status, denied.text]).toEqual([403, 'Permission denied']);
    const all = await call(url, 'GET', '/v1/event/stream', { token: ro });
    expect(all.status).toBe(403);
  });
});

describe('token resolution', () => {
  it('accepts Authorization: Bearer', async () => {
    const r = await call(url, 'GET', '/v1/volume/csi/postgres-data', {
      headers: { authorization: `bearer ${mgmt} trailing` },
    });
    expect(r.status).toBe(200);
  });

  it('prefers X-Nomad-Token over Authorization', async () => {
    const r = await call(url, 'GET', '/v1/volume/csi/postgres-data', {
      token: ro,
      headers: { authorization: `Bearer ${mgmt}` },
    });
    expect(r.status).toBe(403);
  });

  it('answers an unknown token with 403 Permission denied (Nomad ≥1.5 Authenticate)', async () => {
    const r = await call(url, 'GET', '/v1/volumes?type=csi', { token: 'not-a-token' });
    expect([r.status, r.text]).toEqual([403, 'Permission denied']);
  });

  it('applies the anonymous policy without a token', async () => {
    expect((await call(url, 'GET', '/v1/volumes?type=csi&namespace=analytics')).status).toBe(200);
    expect((await call(url, 'GET', '/v1/volumes?type=csi')).status).toBe(403);
  });

  it('management sees 404s in unknown namespaces where others get 403', async () => {
    expect((await call(url, 'GET', '/v1/volume/csi/x?namespace=ghost', { token: mgmt })).status).toBe(404);
    expect((await call(url, 'GET', '/v1/volume/csi/x?namespace=ghost', { token: ro })).status).toBe(403);
  });

  it('supports glob namespace rules', async () => {
    sim.addToken({ secret: 'glob', namespaces: { 'ana*': 'write' } });
    expect((await call(url, 'GET', '/v1/volumes?type=csi&namespace=analytics', { token: 'glob' })).status).toBe(200);
    expect((await call(url, 'GET', '/v1/volumes?type=csi', { token: 'glob' })).status).toBe(403);
  });
});

describe('ACLs disabled', () => {
  it('allows everything and ignores tokens', async () => {
    const open = new NomadSimulator({ acl: { enabled: false } });
    seedDemoCluster(open, 'west');
    const u = await open.listen();
    try {
      expect(ids(await call(u, 'GET', '/v1/volumes?type=csi&namespace=*', { token: 'whatever' }))).toHaveLength(6);
      expect((await call(u, 'DELETE', '/v1/volume/csi/etl-staging?namespace=analytics')).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('explicit capability lists (namespace "x" { capabilities = [...] })', () => {
  it('lets a token with only csi-list-volume list a namespace but not read its volumes', async () => {
    sim.addToken({ secret: 'list-only', namespaces: { analytics: ['csi-list-volume'] } });
    expect(ids(await call(url, 'GET', '/v1/volumes?type=csi&namespace=analytics', { token: 'list-only' }))).toEqual([
      'notebooks',
      'spark-shuffle',
      'warehouse-scratch',
    ]);
    const read = await call(url, 'GET', '/v1/volume/csi/notebooks?namespace=analytics', { token: 'list-only' });
    expect({ status: read.status, text: read.text }).toEqual({ status: 403, text: 'Permission denied' });
  });
});
