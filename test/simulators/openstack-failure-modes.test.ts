/**
 * The OpenStack simulator's failure modes made at once through its control API
 * (simulators/openstack/nova/failure-modes.ts): what Cinder and Nova answer afterwards, as a
 * member reads them through their APIs.
 */
import { call, sleep, startCloud, type Cloud } from './openstack-helpers';

let c: Cloud;

beforeEach(async () => {
  c = await startCloud();
});
afterEach(() => c.sim.close());

const ctl = (route: string, body: unknown = {}) =>
  call(`${new URL(c.urls.keystoneUrl).origin}/_sim/${route}`, 'POST', { body: body as object });

/** A server in demo with one attached volume; their ids. */
function attached(name: string): { server: string; volume: string } {
  const server = c.sim.seedServer({ project: 'demo', name });
  const volume = c.sim.seedVolume({ project: 'demo', name: `${name}-vol` });
  c.sim.attachNow(server, volume);
  return { server, volume };
}

const volume = async (id: string) =>
  (await call(`${c.cinder.demo}/volumes/${id}`, 'GET', { token: c.t.demo })).json.volume;
const novaList = (server: string) =>
  call(`${c.nova}/servers/${server}/os-volume_attachments`, 'GET', { token: c.t.demo });
const serverView = (server: string) => call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo });

describe('POST /_sim/failures/stuck-detaching', () => {
  it('should leave the volume detaching with its attachment and the BDM, and stay so', async () => {
    const { server, volume: id } = attached('s1');
    const before = await volume(id);
    expect((await ctl('failures/stuck-detaching', { serverId: server, volumeId: id })).status).toBe(200);
    await sleep(200); // several detachMs (FAST)
    const v = await volume(id);
    expect(v.status).toBe('detaching');
    expect(v.attachments.map((a: { server_id: string }) => a.server_id)).toEqual([server]);
    expect(v.updated_at >= before.updated_at).toBe(true);
    expect((await novaList(server)).json.volumeAttachments.map((a: { volumeId: string }) => a.volumeId)).toEqual([id]);
  });

  it('should be recovered by os-roll_detaching, as in a real cloud', async () => {
    const { server, volume: id } = attached('s1');
    await ctl('failures/stuck-detaching', { serverId: server, volumeId: id });
    const res = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-roll_detaching': {} },
    });
    expect(res.status).toBe(202);
    expect((await volume(id)).status).toBe('in-use');
  });

  it('should refuse a volume that is not in-use (400), as os-begin_detaching does', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's1' });
    const id = c.sim.seedVolume({ project: 'demo', name: 'v' });
    expect((await ctl('failures/stuck-detaching', { serverId: server, volumeId: id })).status).toBe(400);
    expect((await volume(id)).status).toBe('available');
  });
});

describe('POST /_sim/failures/dangling-attachment', () => {
  it("should leave Cinder available with no attachment while Nova still lists it (nova-26/06's end state)", async () => {
    const { server, volume: id } = attached('s1');
    expect((await ctl('failures/dangling-attachment', { serverId: server, volumeId: id })).status).toBe(200);
    expect((await volume(id)).status).toBe('detaching');
    await sleep(150);
    const v = await volume(id);
    expect([v.status, v.attachments]).toEqual(['available', []]);
    expect((await novaList(server)).json.volumeAttachments.map((a: { volumeId: string }) => a.volumeId)).toEqual([id]);
    expect((await serverView(server)).json.server['os-extended-volumes:volumes_attached']).toEqual([{ id }]);
  });
});

describe('POST /_sim/failures/server-deleted-keeping-attachments', () => {
  it('should delete the server while Cinder keeps the volume in-use, attached to it', async () => {
    const { server, volume: id } = attached('s1');
    expect((await ctl('failures/server-deleted-keeping-attachments', { serverId: server })).status).toBe(200);
    expect((await serverView(server)).status).toBe(404);
    const list = await call(`${c.nova}/servers/detail`, 'GET', { token: c.t.demo });
    expect(list.json.servers.map((s: { id: string }) => s.id)).not.toContain(server);
    const v = await volume(id);
    expect(v.status).toBe('in-use');
    expect(v.attachments.map((a: { server_id: string }) => a.server_id)).toEqual([server]);
  });

  it('should answer 404 for an unknown server', async () => {
    expect((await ctl('failures/server-deleted-keeping-attachments', { serverId: 'nope' })).status).toBe(404);
  });
});

describe('POST /_sim/servers/:id/shelve-offload', () => {
  it('should make the server SHELVED_OFFLOADED and its volume reserved, the BDM kept', async () => {
    const { server, volume: id } = attached('s1');
    expect((await ctl(`servers/${server}/shelve-offload`)).status).toBe(200);
    expect((await serverView(server)).json.server.status).toBe('SHELVED_OFFLOADED');
    const v = await volume(id);
    expect([v.status, v.attachments]).toEqual(['reserved', []]);
    expect((await serverView(server)).json.server['os-extended-volumes:volumes_attached']).toEqual([{ id }]);
  });
});
