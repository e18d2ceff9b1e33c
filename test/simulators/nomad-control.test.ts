/**
 * The `/_sim/` control API over HTTP, for simulators driven from another process, and the
 * request log.
 */
import { NomadSimulator } from '../../simulators/nomad';
import { call, json } from './nomad-helpers';
import { until } from '../support/until';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  sim = new NomadSimulator({ claimReleaseDelayMs: 0 });
  url = await sim.listen();
});

afterEach(async () => {
  await sim.close();
});

const ctl = (method: string, path: string, body?: object): ReturnType<typeof call> =>
  call(url, method, `/_sim${path}`, body ? { body } : {});

describe('control API', () => {
  it('seeds a cluster and drives allocations over HTTP', async () => {
    for (const [p, b] of [
      ['/namespaces', { name: 'analytics' }],
      ['/tokens', { secret: 'root', management: true }],
      ['/nodes', { id: 'node-1', name: 'client-1' }],
      ['/plugins', { id: 'aws-ebs0', provider: 'ebs.csi.aws.com', version: 'v1.38.1', controllerRequired: true }],
      [
        '/volumes',
        { ID: 'data', Namespace: 'analytics', PluginID: 'aws-ebs0', ExternalID: 'vol-data', Capacity: 1073741824 },
      ],
      ['/plugins/aws-ebs0/external-volumes', { ExternalID: 'vol-orphan', CapacityBytes: 5 }],
      [
        '/plugins/aws-ebs0/snapshots',
        { ID: 'snap-1', ExternalSourceVolumeID: 'vol-data', SizeBytes: 1073741824, CreateTime: 1700000000 },
      ],
    ] as Array<[string, object]>) {
      const r = await ctl('POST', p, b);
      expect({ p, status: r.status, body: json(r) }).toEqual({ p, status: 200, body: { ok: true } });
    }
    const placed = await ctl('POST', '/allocations', {
      namespace: 'analytics',
      jobId: 'etl',
      nodeId: 'node-1',
      volumes: [{ volumeId: 'data', mode: 'write' }],
    });
    expect(placed.status).toBe(200);
    const allocId = json<{ id: string }>(placed).id;
    expect(allocId).toMatch(/^[0-9a-f-]{36}$/);

    const read = async (): Promise<any> =>
      json(await call(url, 'GET', '/v1/volume/csi/data?namespace=analytics', { token: 'root' }));
    expect((await read()).WriteAllocs).toEqual({ [allocId]: null });
    expect(
      json(await call(url, 'GET', '/v1/volumes/snapshot?plugin_id=aws-ebs0', { token: 'root' })).Snapshots[0].ID,
    ).toBe('snap-1');

    expect((await ctl('POST', '/plugins/aws-ebs0/health', { nodesHealthy: 0 })).status).toBe(200);
    expect((await read()).Schedulable).toBe(false);

    expect((await ctl('POST', `/allocations/${allocId}/status`, { clientStatus: 'complete' })).status).toBe(200);
    await until(
      async () => Object.keys((await read()).WriteAllocs).length === 0,
      'Object.keys((await read()).WriteAllocs).length === 0',
    );
    expect((await ctl('DELETE', `/allocations/${allocId}`)).status).toBe(200);
  });

  it('answers JSON errors: 400 for bad input and rejected claims, 404 for unknown ids/routes', async () => {
    await ctl('POST', '/nodes', { id: 'n', name: 'n' });
    await ctl('POST', '/plugins', { id: 'p', provider: 'p', version: '1', controllerRequired: false });
    await ctl('POST', '/volumes', { ID: 'v', PluginID: 'p' });
    await ctl('POST', '/allocations', { jobId: 'a', nodeId: 'n', volumes: [{ volumeId: 'v', mode: 'write' }] });
    const claim = await ctl('POST', '/allocations', {
      jobId: 'b',
      nodeId: 'n',
      volumes: [{ volumeId: 'v', mode: 'write' }],
    });
    expect([claim.status, json(claim)]).toEqual([400, { error: 'volume max claims reached' }]);
    const bad = await call(url, 'POST', '/_sim/nodes', { body: '{nope' });
    expect(bad.status).toBe(400);
    expect(json(bad).error).toMatch(/^invalid JSON body/);
    expect((await ctl('POST', '/nodes', { id: 1 })).status).toBe(400);
    expect([
      (await ctl('DELETE', '/allocations/ghost')).status,
      (await ctl('POST', '/plugins/ghost/health', {})).status,
    ]).toEqual([404, 404]);
    expect((await ctl('GET', '/nope')).status).toBe(404);
    expect((await ctl('POST', '/volumes', { ID: 'w', PluginID: 'ghost' })).status).toBe(404);
  });

  it('sets latency and queues failures', async () => {
    expect((await ctl('POST', '/latency', { ms: 80 })).status).toBe(200);
    const t0 = Date.now();
    await call(url, 'GET', '/v1/status/leader');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(75);
    await ctl('POST', '/latency', { ms: 0 });
    await ctl('POST', '/fail-next', { count: 1, status: 500, body: 'rpc error: EOF', method: 'GET' });
    const failed = await call(url, 'GET', '/v1/status/leader');
    expect([failed.status, failed.text, failed.headers['content-type']]).toEqual([
      500,
      'rpc error: EOF',
      'text/plain; charset=utf-8',
    ]);
    expect((await call(url, 'GET', '/v1/status/leader')).status).toBe(200);
  });

  it('logs API requests (not control calls) and clears the log', async () => {
    await ctl('POST', '/tokens', { secret: 's3', management: true });
    await call(url, 'PUT', '/v1/volume/csi/x?namespace=default&a=1&a=2', { token: 's3', body: '{"Volumes":[]}' });
    await call(url, 'GET', '/v1/volumes/external?plugin_id=%2Fx', { headers: { authorization: 'Bearer s3' } });
    const log = json<any[]>(await ctl('GET', '/requests'));
    expect(log.map((e) => [e.method, e.path, e.status])).toEqual([
      ['PUT', '/v1/volume/csi/x', 500],
      ['GET', '/v1/volumes/external', 500],
    ]);
    expect(log[0]).toMatchObject({
      rawPath: '/v1/volume/csi/x?namespace=default&a=1&a=2',
      query: { namespace: ['default'], a: ['1', '2'] },
      token: 's3',
      body: '{"Volumes":[]}',
    });
    expect(log[0].headers['x-nomad-token']).toBe('s3');
    expect(log[1]).toMatchObject({ query: { plugin_id: ['/x'] }, token: 's3' });
    expect(sim.requests()).toHaveLength(2);
    expect((await ctl('DELETE', '/requests')).status).toBe(200);
    expect(sim.requests()).toEqual([]);
  });

  it('seeds the demo cluster', async () => {
    const r = await ctl('POST', '/demo', { variant: 'west' });
    expect(json(r)).toEqual({ managementToken: 'demo-west-management', readOnlyToken: 'demo-west-analytics-read' });
    const list = json<any[]>(
      await call(url, 'GET', '/v1/volumes?type=csi&namespace=*', { token: 'demo-west-management' }),
    );
    expect(list).toHaveLength(6);
  });
});
