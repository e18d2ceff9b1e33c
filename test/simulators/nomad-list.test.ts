/**
 * Volume list semantics (hashicorp/nomad nomad/csi_endpoint.go `List`, nomad/state/paginator/,
 * nomad/rpc.go `blockingRPC`): pagination tokens, filters evaluated against the stored struct, the
 * prefix/plugin_id/node_id paths, and blocking queries.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { call, json, MGMT, NODE1, NODE2, startSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  ({ sim, url } = await startSim());
  sim.addNamespace('analytics');
  for (const id of ['vol-a', 'vol-b', 'vol-c', 'vol-d', 'vol-e']) {
    sim.seedVolume({
      ID: id,
      Name: `name ${id}`,
      PluginID: id === 'vol-e' ? 'hostpath' : 'aws-ebs0',
      ExternalID: id === 'vol-e' ? '' : `ext-${id}`,
      Parameters: id === 'vol-b' ? { type: 'gp3' } : { type: 'gp2' },
    });
  }
  sim.seedVolume({ ID: 'vol-x', Namespace: 'analytics', PluginID: 'aws-ebs0', ExternalID: 'ext-x' });
});

afterEach(async () => {
  await sim.close();
});

const ids = (r: { text: string }): string[] => (JSON.parse(r.text) as Array<{ ID: string }>).map((v) => v.ID);
const list = (q: string): Promise<{ status: number; headers: Record<string, string>; text: string }> =>
  call(url, 'GET', `/v1/volumes?type=csi&${q}`, { token: MGMT });

describe('pagination', () => {
  it('pages with "<ns>.<id>" tokens naming the first item of the next page', async () => {
    const p1 = await list('per_page=2');
    expect(ids(p1)).toEqual(['vol-a', 'vol-b']);
    expect(p1.headers['x-nomad-nexttoken']).toBe('default.vol-c');
    const p2 = await list('per_page=2&next_token=default.vol-c');
    expect(ids(p2)).toEqual(['vol-c', 'vol-d']);
    expect(p2.headers['x-nomad-nexttoken']).toBe('default.vol-e');
    const p3 = await list('per_page=2&next_token=default.vol-e');
    expect(ids(p3)).toEqual(['vol-e']);
    expect(p3.headers['x-nomad-nexttoken']).toBeUndefined();
  });

  it('starts after a token that names no volume, across namespaces', async () => {
    expect(ids(await list('next_token=default.vol-bb'))).toEqual(['vol-c', 'vol-d', 'vol-e']);
    const all = await list('namespace=*&per_page=5');
    expect(ids(all)).toEqual(['vol-x', 'vol-a', 'vol-b', 'vol-c', 'vol-d']);
    expect(all.headers['x-nomad-nexttoken']).toBe('default.vol-e');
  });

  it('with a filter, the next token is the next matching volume', async () => {
    const r = await list(`per_page=1&filter=${encodeURIComponent('PluginID == "aws-ebs0"')}&next_token=default.vol-b`);
    expect(ids(r)).toEqual(['vol-b']);
    expect(r.headers['x-nomad-nexttoken']).toBe('default.vol-c');
  });

  it('returns [] (never null) for an empty page', async () => {
    expect((await list('namespace=ghost')).text).toBe('[]');
  });
});

describe('filter', () => {
  const f = (expr: string): Promise<string[]> => list(`filter=${encodeURIComponent(expr)}`).then(ids);

  it('matches on stored fields, including ones not in the stub', async () => {
    expect(await f('Parameters["type"] == "gp3"')).toEqual(['vol-b']);
    expect(await f('Parameters.type != gp3 and PluginID == `aws-ebs0`')).toEqual(['vol-a', 'vol-c', 'vol-d']);
    expect(await f('ExternalID is empty')).toEqual(['vol-e']);
    expect(await f('"gp" in Parameters.type and not (ID matches "[ab]$")')).toEqual(['vol-c', 'vol-d', 'vol-e']);
    expect(await f('Name contains "vol-d" or ID == "vol-a"')).toEqual(['vol-a', 'vol-d']);
    // Unquoted values are selectors: a hyphen ends them (go-bexpr grammar), so this is a 400.
    expect((await list(`filter=${encodeURIComponent('ID == vol-a')}`)).status).toBe(400);
    expect(await f('"type" not in Parameters')).toEqual([]);
    expect(await f('Parameters.missing == "x"')).toEqual([]);
  });

  it('sees stored health (false for never-claimed volumes), not the denormalised stub', async () => {
    const stubs = json<Array<{ Schedulable: boolean }>>(await list(''));
    expect(stubs.every((s) => s.Schedulable)).toBe(true);
    expect(await f('Schedulable == true')).toEqual([]);
    sim.placeAllocation({ jobId: 'j', nodeId: NODE1, volumes: [{ volumeId: 'vol-c', mode: 'write' }] });
    expect(await f('Schedulable == true')).toEqual(['vol-c']);
    expect(await f('WriteAllocs is not empty')).toEqual(['vol-c']);
  });
});

describe('iterator paths', () => {
  it('prefix, plugin_id (exact) and the plugin_id + namespace=* quirk', async () => {
    expect(ids(await list('prefix=vol-d'))).toEqual(['vol-d']);
    expect(ids(await list('namespace=*&prefix=vol-x'))).toEqual(['vol-x']);
    expect(ids(await list('plugin_id=hostpath'))).toEqual(['vol-e']);
    expect(ids(await list('plugin_id=aws'))).toEqual([]);
    expect(ids(await list('plugin_id=aws-ebs0&namespace=*'))).toEqual([]);
  });

  it('node_id lists volumes of running allocs on that node', async () => {
    sim.placeAllocation({
      id: '00000000-0000-4000-8000-000000000001',
      jobId: 'a',
      nodeId: NODE1,
      volumes: [{ volumeId: 'vol-a', mode: 'write' }],
    });
    sim.placeAllocation({
      id: '00000000-0000-4000-8000-000000000002',
      jobId: 'b',
      nodeId: NODE2,
      volumes: [{ volumeId: 'vol-b', mode: 'write' }],
    });
    expect(ids(await list(`node_id=${NODE1}`))).toEqual(['vol-a']);
    sim.setAllocationStatus('00000000-0000-4000-8000-000000000001', {
      desiredStatus: 'stop',
      clientStatus: 'complete',
    });
    expect(ids(await list(`node_id=${NODE1}`))).toEqual([]);
  });
});

describe('blocking queries', () => {
  it('returns as soon as the table index passes ?index', async () => {
    const first = await list('');
    const idx = Number(first.headers['x-nomad-index']);
    const t0 = Date.now();
    const pending = list(`index=${idx}&wait=5s`);
    setTimeout(() => sim.seedVolume({ ID: 'vol-new', PluginID: 'hostpath' }), 100);
    const r = await pending;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(Number(r.headers['x-nomad-index'])).toBeGreaterThan(idx);
    expect(ids(r)).toContain('vol-new');
  });

  it('answers 200 with the unchanged index when the wait expires', async () => {
    const idx = Number((await list('')).headers['x-nomad-index']);
    const t0 = Date.now();
    const r = await list(`index=${idx}&wait=300ms`);
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(Number(r.headers['x-nomad-index'])).toBe(idx);
  });

  it('a single-volume read wakes only for its own row', async () => {
    const r0 = await call(url, 'GET', '/v1/volume/csi/vol-a', { token: MGMT });
    const idx = Number(r0.headers['x-nomad-index']);
    const t0 = Date.now();
    const pending = call(url, 'GET', `/v1/volume/csi/vol-a?index=${idx}&wait=400ms`, { token: MGMT });
    setTimeout(() => sim.seedVolume({ ID: 'vol-other', PluginID: 'hostpath' }), 50);
    const r = await pending;
    // Another volume changed the table but not this row: no wake-up; on timeout the last run's
    // result (and index) is returned.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
    expect(Number(r.headers['x-nomad-index'])).toBe(idx);

    const idx2 = Number((await call(url, 'GET', '/v1/volume/csi/vol-a', { token: MGMT })).headers['x-nomad-index']);
    expect(idx2).toBeGreaterThan(idx);
    const t1 = Date.now();
    const woke = call(url, 'GET', `/v1/volume/csi/vol-a?index=${idx2}&wait=5s`, { token: MGMT });
    setTimeout(
      () => sim.placeAllocation({ jobId: 'j', nodeId: NODE1, volumes: [{ volumeId: 'vol-a', mode: 'read' }] }),
      50,
    );
    const w = await woke;
    expect(Date.now() - t1).toBeLessThan(2000);
    expect(json(w).ReadAllocs).not.toEqual({});
  });

  it('a read of a not-yet-existing volume waits for it to appear', async () => {
    const idx = Number((await call(url, 'GET', '/v1/volume/csi/later', { token: MGMT })).headers['x-nomad-index']);
    const pending = call(url, 'GET', `/v1/volume/csi/later?index=${idx}&wait=5s`, { token: MGMT });
    setTimeout(() => sim.seedVolume({ ID: 'later', PluginID: 'hostpath' }), 50);
    expect((await pending).status).toBe(200);
  });

  it('plugin reads block on the plugin and wake on health changes', async () => {
    const r0 = await call(url, 'GET', '/v1/plugin/csi/aws-ebs0', { token: MGMT });
    const idx = Number(r0.headers['x-nomad-index']);
    const pending = call(url, 'GET', `/v1/plugin/csi/aws-ebs0?index=${idx}&wait=5s`, { token: MGMT });
    setTimeout(() => sim.setPluginHealth('aws-ebs0', { controllersHealthy: 0 }), 50);
    const r = await pending;
    expect(json(r).ControllersHealthy).toBe(0);
    const vol = json(await call(url, 'GET', '/v1/volume/csi/vol-a', { token: MGMT }));
    expect(vol.Schedulable).toBe(false);
  });

  it('close() ends pending blocking queries', async () => {
    const idx = Number((await list('')).headers['x-nomad-index']);
    const pending = list(`index=${idx}&wait=60s`).catch(() => 'closed');
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await sim.close();
    await pending;
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
