/**
 * The error catalogue (test/fixtures/upstream/nomad/http-errors.from-code.json; hashicorp/nomad
 * command/agent/http.go and the CSI handlers): exact statuses, plain-text bodies and routing
 * answers.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { call, MGMT, NODE1, startSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;

const CAP = [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }];

beforeAll(async () => {
  ({ sim, url } = await startSim());
  sim.seedVolume({ ID: 'busy', PluginID: 'aws-ebs0', ExternalID: 'vol-busy' });
  sim.seedVolume({ ID: 'idle', PluginID: 'aws-ebs0', ExternalID: 'vol-idle' });
  sim.seedVolume({ ID: 'local', PluginID: 'hostpath' });
  sim.placeAllocation({ jobId: 'web', nodeId: NODE1, volumes: [{ volumeId: 'busy', mode: 'write' }] });
  sim.addPlugin({
    id: 'no-create',
    provider: 'x.csi',
    version: '1',
    controllerRequired: true,
    capabilities: { SupportsCreateDelete: false },
  });
});

afterAll(async () => {
  await sim.close();
});

async function expectText(
  method: string,
  path: string,
  status: number,
  text: string,
  body?: string | object,
): Promise<void> {
  const r = await call(url, method, path, { token: MGMT, ...(body !== undefined ? { body } : {}) });
  expect({ status: r.status, text: r.text }).toEqual({ status, text });
  if (text !== '') expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
}

describe('routing', () => {
  it.each([
    ['PATCH', '/v1/volume/csi/idle', 405, 'Invalid method'],
    ['POST', '/v1/volume/csi/idle', 405, 'Invalid method'],
    ['GET', '/v1/volume/csi/idle/create', 405, 'Invalid method'],
    ['POST', '/v1/volume/csi/idle/create', 405, 'Invalid method'],
    ['PUT', '/v1/volume/csi/idle/detach', 404, 'resource not found'],
    ['DELETE', '/v1/volume/csi/idle/other', 404, 'resource not found'],
    ['GET', '/v1/volume/csi/a/b/c', 404, 'resource not found'],
    ['DELETE', '/v1/volumes', 405, 'Invalid method'],
    ['POST', '/v1/volumes/external', 405, 'Invalid method'],
    ['PATCH', '/v1/volumes/snapshot', 405, 'Invalid method'],
    ['POST', '/v1/plugins', 405, 'Invalid method'],
    ['DELETE', '/v1/plugin/csi/aws-ebs0', 405, 'Invalid method'],
    ['GET', '/v1/plugin/csi/a/b/c', 404, 'resource not found'],
    ['GET', '/v1/volumes?type=other', 404, 'resource not found'],
    ['POST', '/v1/event/stream', 405, 'Invalid method'],
    ['POST', '/v1/status/leader', 405, 'Invalid method'],
  ])('%s %s → %i %s', async (method, path, status, text) => {
    await expectText(method, path, status, text);
  });

  it('answers unknown paths with an empty 404 and redirects like Go ServeMux', async () => {
    const r = await call(url, 'GET', '/v1/nothing-here', { token: MGMT });
    expect(r.status).toBe(404);
    expect(r.text).toBe('');
    expect(r.headers['content-type']).toBeUndefined();
    const slash = await call(url, 'GET', '/v1/volume/csi?namespace=x');
    expect(slash.status).toBe(301);
    expect(slash.headers.location).toBe('/v1/volume/csi/?namespace=x');
    expect(slash.text).toBe('<a href="/v1/volume/csi/?namespace=x">Moved Permanently</a>.\n\n');
    const dots = await call(url, 'GET', '/v1//volumes');
    expect(dots.status).toBe(301);
    expect(dots.headers.location).toBe('/v1/volumes');
    const root = await call(url, 'GET', '/');
    expect(root.status).toBe(307);
    expect(root.headers.location).toBe('/ui/');
  });

  it('GET /v1/volume/csi/ (empty id) is a 500', async () => {
    await expectText('GET', '/v1/volume/csi/', 500, 'missing volume ID');
  });

  it('GET /v1/plugin/csi/unknown → 404 with X-Nomad-Index 0', async () => {
    const r = await call(url, 'GET', '/v1/plugin/csi/unknown', { token: MGMT });
    expect(r.status).toBe(404);
    expect(r.text).toBe('plugin not found');
    expect(r.headers['x-nomad-index']).toBe('0');
  });
});

describe('register / create', () => {
  it('rejects bodies like Go decodeBody', async () => {
    await expectText('PUT', '/v1/volume/csi/x', 400, 'Request body is empty', '');
    await expectText(
      'PUT',
      '/v1/volume/csi/x',
      400,
      "invalid character 'n' looking for beginning of object key string",
      '{nope}',
    );
    await expectText('PUT', '/v1/volumes', 400, 'unexpected EOF', '{"Volumes":[');
  });

  it.each<[string, object, string]>([
    [
      'missing fields',
      { Volumes: [{}] },
      'validation: missing volume id, missing plugin id, must include at least one capability block',
    ],
    ['no volumes', { Volumes: [] }, 'missing volume definition'],
    [
      'unknown plugin',
      { Volumes: [{ ID: 'a', PluginID: 'nope', RequestedCapabilities: CAP }] },
      'no CSI plugin named: nope could be found',
    ],
    [
      'snapshot and clone',
      { Volumes: [{ ID: 'a', PluginID: 'hostpath', SnapshotID: 's', CloneID: 'c', RequestedCapabilities: CAP }] },
      'validation: only one of snapshot_id and clone_id is allowed',
    ],
    [
      'empty topology',
      {
        Volumes: [
          {
            ID: 'a',
            PluginID: 'hostpath',
            RequestedCapabilities: CAP,
            RequestedTopologies: { Required: [{ foo: 'bar' }] },
          },
        ],
      },
      'validation: required topology is missing segments field',
    ],
    [
      'immutable field',
      { Volumes: [{ ID: 'idle', PluginID: 'hostpath', RequestedCapabilities: CAP }] },
      'unable to update volume: 1 error occurred:\n\t* volume plugin ID cannot be updated\n\n',
    ],
    [
      'unknown namespace',
      { Volumes: [{ ID: 'a', PluginID: 'hostpath', Namespace: 'ghost', RequestedCapabilities: CAP }] },
      'volume a is in nonexistent namespace ghost',
    ],
    [
      'provider lacks volume',
      { Volumes: [{ ID: 'a', PluginID: 'aws-ebs0', ExternalID: 'vol-missing', RequestedCapabilities: CAP }] },
      'controller validate volume: volume "vol-missing" could not be found: rpc error: code = NotFound desc = Volume not found',
    ],
  ])('register: %s → 500', async (_name, body, text) => {
    await expectText('PUT', '/v1/volume/csi/x', 500, text, body);
  });

  it('re-registering expands capacity and rejects incompatible updates', async () => {
    const GiB = 1073741824;
    const reg = (extra: object): Promise<{ status: number; text: string }> =>
      call(url, 'PUT', '/v1/volume/csi/idle', {
        token: MGMT,
        body: { Volumes: [{ ID: 'idle', PluginID: 'aws-ebs0', RequestedCapabilities: CAP, ...extra }] },
      });
    const grown = await reg({ RequestedCapacityMin: 2 * GiB });
    expect(grown.status).toBe(200);
    expect(JSON.parse(grown.text).Volumes[0]).toMatchObject({
      Capacity: 2 * GiB,
      RequestedCapacityMin: 2 * GiB,
      ExternalID: 'vol-idle',
    });
    const shrink = await reg({ RequestedCapacityMin: GiB, RequestedCapacityMax: GiB });
    expect([shrink.status, shrink.text]).toEqual([
      500,
      'unable to update volume: max requested capacity (1.1 GB) less than or equal to current (2.1 GB)',
    ]);
    const params = await reg({ Parameters: { type: 'io2' } });
    expect(params.text).toBe('unable to update volume: 1 error occurred:\n\t* volume parameters cannot be updated\n\n');
    const mount = await call(url, 'PUT', '/v1/volumes', {
      token: MGMT,
      body: {
        Volumes: [{ ID: 'busy', PluginID: 'aws-ebs0', RequestedCapabilities: CAP, MountOptions: { FSType: 'xfs' } }],
      },
    });
    expect(mount.text).toBe(
      'unable to update volume: 1 error occurred:\n\t* can not update mount options while volume is in use\n\n',
    );
  });

  it('create needs a controller with CREATE_DELETE_VOLUME', async () => {
    await expectText('PUT', '/v1/volume/csi/x/create', 500, 'plugin has no controller', {
      Volumes: [{ ID: 'n', PluginID: 'hostpath', RequestedCapabilities: CAP }],
    });
    await expectText('PUT', '/v1/volume/csi/x/create', 500, 'plugin does not support creating volumes', {
      Volumes: [{ ID: 'n', PluginID: 'no-create', RequestedCapabilities: CAP }],
    });
  });

  it('no healthy controllers', async () => {
    sim.setPluginHealth('no-create', { controllersHealthy: 0 });
    await expectText('PUT', '/v1/volume/csi/x', 500, 'no healthy controllers for CSI plugin: no-create', {
      Volumes: [{ ID: 'n', PluginID: 'no-create', RequestedCapabilities: CAP }],
    });
  });
});

describe('deregister / delete / detach', () => {
  it.each([
    ['DELETE', '/v1/volume/csi/ghost', 500, 'volume not found: ghost'],
    ['DELETE', '/v1/volume/csi/busy', 500, 'volume in use: busy'],
    ['DELETE', '/v1/volume/csi/busy?force=true', 500, 'volume in use: busy'],
    ['DELETE', '/v1/volume/csi/idle?force=yes', 400, 'invalid force value'],
    ['DELETE', '/v1/volume/csi/idle/detach', 400, 'detach requires node ID'],
    ['DELETE', '/v1/volume/csi/ghost/detach?node=n1', 500, 'no such volume'],
    ['DELETE', '/v1/volume/csi/ghost/delete', 500, 'volume not found: ghost'],
    ['DELETE', '/v1/volume/csi/local/delete', 500, 'plugin "hostpath" for volume "local" not found'],
  ])('%s %s → %i', async (method, path, status, text) => {
    await expectText(method, path, status, text);
  });

  it('delete removes the provider volume, then refuses to deregister an in-use volume', async () => {
    await expectText('DELETE', '/v1/volume/csi/busy/delete', 500, 'volume in use: busy');
    const ext = await call(url, 'GET', '/v1/volumes/external?plugin_id=aws-ebs0', { token: MGMT });
    expect(ext.text).not.toContain('vol-busy');
  });
});

describe('plugin-backed endpoints', () => {
  it.each([
    ['GET', '/v1/volumes/external?plugin_id=nope', 500, 'no such plugin'],
    ['GET', '/v1/volumes/external?plugin_id=hostpath', 500, 'unimplemented for this plugin'],
    ['GET', '/v1/volumes/snapshot?plugin_id=nope', 500, 'no such plugin'],
    ['GET', '/v1/volumes/snapshot?plugin_id=hostpath', 500, 'plugin does not support listing snapshots'],
    ['DELETE', '/v1/volumes/snapshot?plugin_id=nope&snapshot_id=s', 500, '1 error occurred:\n\t* no such plugin\n\n'],
  ])('%s %s → %i', async (method, path, status, text) => {
    await expectText(method, path, status, text);
  });

  it('snapshot create accumulates per-snapshot errors', async () => {
    await expectText(
      'POST',
      '/v1/volumes/snapshot',
      500,
      '2 errors occurred:\n\t* no such volume "ghost"\n\t* plugin "hostpath" does not support snapshot\n\n',
      {
        Snapshots: [{ SourceVolumeID: 'ghost' }, { SourceVolumeID: 'local' }],
      },
    );
  });
});

describe('query parameters', () => {
  it.each([
    ['/v1/volumes?type=csi&per_page=ten', 'Expect a number for `per_page` query string parameter'],
    ['/v1/volumes?type=csi&index=-1', 'Invalid index'],
    ['/v1/volumes?type=csi&wait=soon', 'Invalid wait time'],
    ['/v1/volumes?type=csi&stale=maybe', 'Expect `true` or `false` for `stale` query string parameter'],
    ['/v1/volume/csi/idle?index=x', 'Invalid index'],
    ['/v1/plugins?type=csi&wait=1', 'Invalid wait time'],
    [
      '/v1/volumes?type=csi&filter=' + encodeURIComponent('PluginID =='),
      'failed to create result paginator: failed to read filter expression: 1:12 (11): no match found, expected: "-", "0", "\\"", "`", [ \\t\\r\\n], [1-9] or [a-zA-Z]',
    ],
    [
      '/v1/volumes?type=csi&filter=' + encodeURIComponent('Bogus == 1'),
      'failed to read result page: error finding value in datum: /Bogus at part 0: couldn\'t find key: struct field with name "Bogus"',
    ],
    [
      '/v1/event/stream?topic=CSIVolume:a:b',
      'Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: CSIVolume:a:b',
    ],
    ['/v1/event/stream?index=abc', 'Unable to parse index: strconv.Atoi: parsing "abc": invalid syntax'],
  ])('%s → 400', async (path, text) => {
    await expectText('GET', path, 400, text);
  });

  it('stale accepts Go booleans and a bare flag', async () => {
    expect((await call(url, 'GET', '/v1/volumes?type=csi&stale', { token: MGMT })).status).toBe(200);
    expect((await call(url, 'GET', '/v1/volumes?type=csi&stale=T', { token: MGMT })).status).toBe(200);
  });

  it('another region has no path', async () => {
    await expectText('GET', '/v1/volumes?type=csi&region=mars', 500, 'No path to region');
  });
});

describe('fault injection', () => {
  it('fails the next matching requests, then recovers', async () => {
    sim.failNext({ count: 2, status: 503, body: 'No cluster leader', method: 'GET', pathPrefix: '/v1/volumes' });
    expect((await call(url, 'GET', '/v1/plugins?type=csi', { token: MGMT })).status).toBe(200);
    await expectText('GET', '/v1/volumes?type=csi', 503, 'No cluster leader');
    await expectText('GET', '/v1/volumes/external?plugin_id=aws-ebs0', 503, 'No cluster leader');
    expect((await call(url, 'GET', '/v1/volumes?type=csi', { token: MGMT })).status).toBe(200);
  });

  it('delays every request by the configured latency', async () => {
    sim.setLatency(120);
    const t0 = Date.now();
    await call(url, 'GET', '/v1/status/leader');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
    sim.setLatency(0);
  });
});
