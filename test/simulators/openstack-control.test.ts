/**
 * The simulator's own surface: the `/_sim/` control API on every port, injected outages and
 * latency, and the demo cloud.
 */
import { OpenStackSimulator, type DemoCredentials } from '../../simulators/openstack';
import { call, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

const sim = (port: 'keystone' | 'cinder' | 'nova', path: string): string =>
  `${{ keystone: c.urls.keystoneUrl.replace(/\/v3$/, ''), cinder: c.urls.cinderUrl, nova: c.urls.novaUrl }[port]}/_sim${path}`;

describe('/_sim/ control API', () => {
  it('should seed over HTTP on any port and expose raw state, unlogged', async () => {
    c.sim.clearRequests();
    const project = (await call(sim('keystone', '/projects'), 'POST', { body: { name: 'ctl' } })).json.id as string;
    expect(
      (
        await call(sim('cinder', '/users'), 'POST', {
          body: { name: 'ctl-user', password: 'pw', projects: { ctl: ['member'] } },
        })
      ).status,
    ).toBe(201);
    const token = (await call(sim('nova', '/tokens'), 'POST', { body: { user: 'ctl-user', project: 'ctl' } })).json
      .token as string;
    const vol = (
      await call(sim('cinder', '/volumes'), 'POST', {
        body: { project: 'ctl', name: 'v', size: 2, id: '11111111-2222-4333-8444-555555555555' },
      })
    ).json.id;
    expect(vol).toBe('11111111-2222-4333-8444-555555555555');
    const server = (await call(sim('nova', '/servers'), 'POST', { body: { project: 'ctl', name: 's' } })).json
      .id as string;
    const att = await call(sim('nova', '/attachments'), 'POST', {
      body: { serverId: server, volumeId: vol, device: '/dev/vdb' },
    });
    expect(att.status).toBe(201);
    expect((await call(sim('cinder', '/snapshots'), 'POST', { body: { volumeId: vol, name: 'snap' } })).status).toBe(
      201,
    );
    expect((await call(sim('cinder', '/messages'), 'POST', { body: { project: 'ctl', volumeId: vol } })).status).toBe(
      201,
    );
    const raw = await call(sim('keystone', `/volumes/${vol}`), 'GET');
    expect(raw.json).toMatchObject({
      status: 'in-use',
      size: 2,
      attachments: [{ id: att.json.id, mountpoint: '/dev/vdb', attachStatus: 'attached' }],
    });
    expect((await call(sim('nova', `/servers/${server}`), 'GET')).json.bdms[0].deviceName).toBe('/dev/vdb');
    const v = await call(`${c.urls.cinderUrl}/v3/${project}/volumes/${vol}`, 'GET', { token });
    expect(v.json.volume.attachments[0].device).toBe('/dev/vdb');
    expect(c.sim.requests().map((e) => e.service)).toEqual(['cinder']);
    expect((await call(sim('cinder', '/requests'), 'GET')).json).toHaveLength(1);
    expect((await call(sim('cinder', '/requests'), 'DELETE')).json).toEqual({ ok: true });
    expect(c.sim.requests()).toEqual([]);
  });

  it('should report errors as JSON 400/404', async () => {
    expect((await call(sim('cinder', '/volumes'), 'POST', { body: { project: 'nope' } })).json).toEqual({
      error: 'project nope not found',
    });
    expect((await call(sim('cinder', '/volumes'), 'POST', { body: { project: 'nope' } })).status).toBe(404);
    expect((await call(sim('cinder', '/volumes'), 'POST', { body: '{' })).status).toBe(400);
    expect((await call(sim('cinder', '/nothing'), 'GET')).status).toBe(404);
    expect((await call(sim('cinder', '/volumes/none'), 'GET')).status).toBe(200);
  });

  it('should change delays and inject faults over HTTP', async () => {
    const d = await call(sim('cinder', '/delays'), 'POST', { body: { extendMs: 25 } });
    expect(d.json.extendMs).toBe(25);
    const id = c.sim.seedVolume({ project: 'demo' });
    await call(sim('cinder', '/faults/extend'), 'POST', { body: { volumeId: id } });
    await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-extend': { new_size: 2 } },
    });
    await until(() => c.sim.volume(id)?.status === 'error_extending', "c.sim.volume(id)?.status === 'error_extending'");
    const att = c.sim.seedVolume({ project: 'demo' });
    const server = c.sim.seedServer({ project: 'demo', name: 'ctl-fail' });
    expect(
      (await call(sim('nova', '/faults/attach'), 'POST', { body: { volumeId: att, rollback: false } })).json,
    ).toEqual({ ok: true });
    await call(`${c.nova}/servers/${server}/os-volume_attachments`, 'POST', {
      token: c.t.demo,
      body: { volumeAttachment: { volumeId: att } },
    });
    await until(
      () => c.sim.volume(att)!.attachments[0]?.attachStatus === 'error_attaching',
      "c.sim.volume(att)!.attachments[0]?.attachStatus === 'error_attaching'",
    );
    const stuck = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(server, stuck);
    await call(sim('nova', '/faults/detach'), 'POST', { body: { volumeId: stuck } });
    expect(
      (await call(`${c.nova}/servers/${server}/os-volume_attachments/${stuck}`, 'DELETE', { token: c.t.demo })).status,
    ).toBe(202);
    await call(sim('cinder', '/faults/create'), 'POST', { body: {} });
    const created = await call(`${c.cinder.demo}/volumes`, 'POST', { token: c.t.demo, body: { volume: { size: 1 } } });
    await until(
      () => c.sim.volume(created.json.volume.id)?.status === 'error',
      "c.sim.volume(created.json.volume.id)?.status === 'error'",
    );
    expect(c.sim.volume(stuck)!.status).toBe('detaching');
  });

  it('should issue and expire tokens over HTTP', async () => {
    const token = (await call(sim('keystone', '/tokens'), 'POST', { body: { user: 'demo', project: 'demo' } })).json
      .token as string;
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token })).status).toBe(200);
    expect((await call(sim('keystone', '/tokens/expire'), 'POST', { body: { token } })).json).toEqual({ ok: true });
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token })).status).toBe(401);
  });
});

describe('outages and latency', () => {
  it('should answer 503 for the next N requests with the service fault body, then recover', async () => {
    c.sim.unavailable({ service: 'cinder', count: 2 });
    for (let i = 0; i < 2; i++) {
      const r = await call(`${c.cinder.demo}/volumes`, 'GET', { token: c.t.demo });
      expect(r.status).toBe(503);
      expect(r.text).toBe(
        '{"serviceUnavailable": {"code": 503, "message": "The server is currently unavailable. Please try again at a later time."}}',
      );
    }
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token: c.t.demo })).status).toBe(200);
    expect(
      c.sim
        .requests()
        .slice(-3)
        .map((e) => e.status),
    ).toEqual([503, 503, 200]);
  });

  it('should answer 503 for a duration, in the proxy style on demand, per service', async () => {
    await call(sim('cinder', '/unavailable'), 'POST', { body: { service: 'nova', forMs: 60, style: 'proxy' } });
    const r = await call(`${c.nova}/servers`, 'GET', { token: c.t.demo });
    expect(r.status).toBe(503);
    expect(r.headers['content-type']).toBe('text/html');
    expect(r.text).toContain('No server is available to handle this request.');
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token: c.t.demo })).status).toBe(200);
    await until(
      async () => (await call(`${c.nova}/servers`, 'GET', { token: c.t.demo })).status === 200,
      "(await call(`${c.nova}/servers`, 'GET', { token: c.t.demo })).status === 200",
    );
  });

  it("should make Keystone unavailable with Keystone's error body, until cleared", async () => {
    c.sim.unavailable({ service: 'keystone' });
    const r = await call(`${c.urls.keystoneUrl}/auth/tokens`, 'POST', { body: {} });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({
      error: {
        code: 503,
        message: 'The server is currently unavailable. Please try again at a later time.',
        title: 'Service Unavailable',
      },
    });
    expect((await call(sim('keystone', '/unavailable/keystone'), 'DELETE')).status).toBe(200);
    expect((await call(c.urls.keystoneUrl, 'GET')).status).toBe(200);
  });

  it('should delay answers by the configured latency', async () => {
    c.sim.setLatency(60, 'cinder');
    let t0 = Date.now();
    await call(`${c.cinder.demo}/volumes`, 'GET', { token: c.t.demo });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
    t0 = Date.now();
    await call(c.urls.keystoneUrl, 'GET');
    expect(Date.now() - t0).toBeLessThan(55);
    c.sim.setLatency(0, 'cinder');
  });
});

describe('demo cloud', () => {
  let demo: OpenStackSimulator;
  let creds: DemoCredentials;
  let urls: Awaited<ReturnType<OpenStackSimulator['listen']>>;
  beforeAll(async () => {
    demo = new OpenStackSimulator();
    creds = demo.seedDemo();
    urls = await demo.listen();
  });
  afterAll(async () => {
    await demo.close();
  });

  it('should let the demo user log in with a password or the application credential', async () => {
    const pw = await call(`${urls.keystoneUrl}/auth/tokens`, 'POST', {
      body: {
        auth: {
          identity: {
            methods: ['password'],
            password: {
              user: { name: creds.demo.username, domain: { name: 'Default' }, password: creds.demo.password },
            },
          },
          scope: { project: { name: 'demo', domain: { name: 'Default' } } },
        },
      },
    });
    expect(pw.status).toBe(201);
    expect(pw.json.token.project.id).toBe(creds.projects.demo);
    const ac = await call(`${urls.keystoneUrl}/auth/tokens`, 'POST', {
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: creds.applicationCredential.id, secret: creds.applicationCredential.secret },
          },
        },
      },
    });
    expect(ac.status).toBe(201);
  });

  it('should offer the default multiattach volume type', async () => {
    const token = demo.issueToken({ user: 'demo', project: 'demo' });
    const types = (await call(`${urls.cinderUrl}/v3/${creds.projects.demo}/types`, 'GET', { token })).json.volume_types;
    expect(types.map((t: { name: string; extra_specs: object }) => [t.name, t.extra_specs])).toEqual([
      ['__DEFAULT__', {}],
      ['multiattach', { multiattach: '<is> True' }],
    ]);
  });

  it('should hold ACTIVE servers and attached, multiattach and bootable volumes in demo', async () => {
    const token = demo.issueToken({ user: 'demo', project: 'demo' });
    const vols = (await call(`${urls.cinderUrl}/v3/${creds.projects.demo}/volumes/detail`, 'GET', { token })).json
      .volumes as Array<{
      name: string;
      status: string;
      bootable: string;
      multiattach: boolean;
      attachments: Array<{ server_id: string; device: string }>;
    }>;
    expect(vols).toHaveLength(8);
    const byName = Object.fromEntries(vols.map((v) => [v.name, v]));
    expect(byName['web-shared']!.multiattach).toBe(true);
    expect(byName['web-shared']!.attachments.map((a) => a.server_id).sort()).toEqual(
      [creds.servers['web-1'], creds.servers['web-2']].sort(),
    );
    expect(byName['db-root']).toMatchObject({ status: 'in-use', bootable: 'true' });
    expect(byName['db-data']!.attachments[0]).toMatchObject({ server_id: creds.servers['db-1'], device: '/dev/sdb' });
    expect(vols.filter((v) => v.status === 'available').length).toBe(4);
    const servers = (await call(`${urls.novaUrl}/v2.1/servers/detail`, 'GET', { token })).json.servers as Array<{
      status: string;
    }>;
    expect(servers).toHaveLength(4);
    expect(servers.every((s) => s.status === 'ACTIVE')).toBe(true);
    const snaps = (await call(`${urls.cinderUrl}/v3/${creds.projects.demo}/snapshots`, 'GET', { token })).json
      .snapshots;
    expect(snaps).toHaveLength(2);
    const admin = demo.issueToken({ user: 'admin', project: 'admin' });
    const all = (
      await call(`${urls.cinderUrl}/v3/${creds.projects.admin}/volumes?all_tenants=1`, 'GET', { token: admin })
    ).json.volumes;
    expect(all).toHaveLength(10);
  });
});
