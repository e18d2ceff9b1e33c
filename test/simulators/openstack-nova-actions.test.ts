/**
 * Nova's os-instance-actions against nova-26/05 (list and detail at 2.1–2.84 as member and
 * admin, the request-id link, paging, errors) and nova-26/06 (a detach that fails in
 * nova-compute: event `compute_detach_volume` = Error, Cinder `available`, Nova still listing
 * the attachment), replayed in the recorded order on one server. What Nova's source says beyond
 * the recordings is in openstack-nova-actions-source.test.ts.
 */
import { createHash } from 'node:crypto';
import {
  call,
  expectRecorded,
  recorded,
  requestIdOf,
  seedBootedServer,
  startCloud,
  type Cloud,
  type RawResponse,
  type Recorded,
} from './openstack-helpers';
import { until } from '../support/until';

const N05 = 'nova-26/05-instance-actions.md';
const N06 = 'nova-26/06-failed-detach.md';

let c: Cloud;
let server: string;
let bootVol: string;
/** Request ids of the actions, by what started them. */
const req: Record<'create' | 'attach' | 'detach' | 'taggedAttach' | 'failedDetach', string> = {
  create: '',
  attach: '',
  detach: '',
  taggedAttach: '',
  failedDetach: '',
};
beforeAll(async () => {
  c = await startCloud({ computeHost: 'real-nova' });
  ({ server, bootVol } = seedBootedServer(c, { server: 'rc-actions-server', volume: 'actions-boot-vol' }));
});
afterAll(async () => {
  await c.sim.close();
});

/** Nova answers carry both Vary values; the recorder kept the last one only. */
function expectNova(res: RawResponse, rec: Recorded): void {
  expectRecorded(res, rec, ['content-type', 'openstack-api-version']);
  expect(res.headers.vary).toContain(rec.headers.vary!);
  expect(res.headers['x-openstack-nova-api-version']).toBe(rec.headers['x-openstack-nova-api-version']);
}

const ia = (sid = server): string => `${c.nova}/servers/${sid}/os-instance-actions`;
const vas = (sid = server): string => `${c.nova}/servers/${sid}/os-volume_attachments`;
const get = (url: string, mv: string, token = c.t.demo): Promise<RawResponse> =>
  call(url, 'GET', { token, mv: `compute ${mv}` });
const ids = (res: RawResponse): string[] => res.json.instanceActions.map((a: { request_id: string }) => a.request_id);
const adminAction = async (id: string): Promise<any> =>
  (await get(`${ia()}/${id}`, '2.84', c.t.admin)).json.instanceAction;

/** The recorded list and detail exchanges for `who` at each microversion. */
async function replayActions(file: string, list: string[], details: Array<[string, string]>): Promise<void> {
  for (const who of ['demo', 'admin'] as const) {
    const token = c.t[who];
    for (const mv of list)
      expectNova(
        await get(ia(), mv, token),
        recorded(file, `GET /servers/{id}/os-instance-actions mv ${mv} as ${who}`),
      );
    for (const [label, id] of details) {
      for (const mv of ['2.1', '2.51', '2.58', '2.62', '2.84'])
        expectNova(
          await get(`${ia()}/${id}`, mv, token),
          recorded(file, `GET /servers/{id}/os-instance-actions/{${label} request id} mv ${mv} as ${who}`),
        );
    }
  }
}

describe('instance actions of an attach and a detach (nova-26/05)', () => {
  it('should record attach_volume and detach_volume under the request ids of their answers', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'actions-data-vol', size: 1 });
    const post = await call(vas(), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.1',
      body: { volumeAttachment: { volumeId: vol } },
    });
    expectNova(post, recorded(N05, 'POST /servers/{id}/os-volume_attachments mv 2.1'));
    req.attach = requestIdOf(post);
    await until(
      async () => (await adminAction(req.attach)).events[0].result === 'Success',
      "(await adminAction(req.attach)).events[0].result === 'Success'",
    );
    expect(c.sim.volume(vol)!.status).toBe('in-use');
    const del = await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo, mv: 'compute 2.1' });
    expectNova(del, recorded(N05, 'DELETE /servers/{id}/os-volume_attachments/{volume} mv 2.1'));
    req.detach = requestIdOf(del);
    await until(
      async () => (await adminAction(req.detach)).events[0].result === 'Success',
      "(await adminAction(req.detach)).events[0].result === 'Success'",
    );
    expect(c.sim.volume(vol)!.status).toBe('available');
    expectNova(
      await get(vas(), '2.1'),
      recorded(N05, 'GET /servers/{id}/os-volume_attachments mv 2.1 (data volume gone)'),
    );
    const list = await get(ia(), '2.1');
    req.create = ids(list)[2]!;
    expect(ids(list)).toEqual([req.detach, req.attach, req.create]);
  });

  it('should list and show the actions per microversion and role as recorded', async () => {
    await replayActions(
      N05,
      ['2.1', '2.58', '2.84'],
      [
        ['attach', req.attach],
        ['detach', req.detach],
      ],
    );
    expectNova(
      await get(`${ia()}/${req.create}`, '2.84', c.t.admin),
      recorded(N05, 'GET /servers/{id}/os-instance-actions/{create request id} mv 2.84 as admin'),
    );
  });

  it('should time the event inside the action and hash hostId from the action project and host', async () => {
    const a = await adminAction(req.detach);
    const [e] = a.events;
    expect(a.start_time <= e.start_time && e.start_time <= e.finish_time).toBe(true);
    expect(a.updated_at).toBe(e.finish_time);
    expect(e.host).toBe('real-nova');
    expect(e.hostId).toBe(createHash('sha224').update(`${c.p.demo}real-nova`).digest('hex'));
    expect(e.hostId).toBe((await get(`${c.nova}/servers/${server}`, '2.1')).json.server.hostId);
  });

  it('should page, filter and refuse as recorded (2.58+), ignoring the query before 2.58', async () => {
    expectNova(await get(`${ia()}?limit=1`, '2.58'), recorded(N05, 'GET os-instance-actions?limit=1 mv 2.58'));
    const next = await get(`${ia()}?limit=1&marker=${req.detach}`, '2.58');
    expectNova(next, recorded(N05, 'GET os-instance-actions?limit=1&marker={newest request id} mv 2.58'));
    expect(next.json.links[0].href).toBe(
      `${c.nova}/servers/${server}/os-instance-actions?limit=1&marker=${req.attach}`,
    );
    expectNova(
      await get(`${ia()}?limit=5`, '2.58'),
      recorded(N05, 'GET os-instance-actions?limit=5 mv 2.58 (fewer than limit: no links)'),
    );
    const attachUpdated = (await get(`${ia()}/${req.attach}`, '2.58')).json.instanceAction.updated_at as string;
    const since = await get(`${ia()}?changes-since=${attachUpdated}`, '2.58');
    expectNova(since, recorded(N05, 'GET os-instance-actions?changes-since={attach updated_at} mv 2.58'));
    expect(ids(since)).toEqual([req.detach, req.attach]);
    const before = await get(`${ia()}?changes-before=${attachUpdated}`, '2.66');
    expectNova(before, recorded(N05, 'GET os-instance-actions?changes-before={attach updated_at} mv 2.66'));
    expect(ids(before)).toEqual([req.attach, req.create]);
    expectNova(
      await get(`${ia()}?changes-before=${attachUpdated}`, '2.58'),
      recorded(N05, 'GET os-instance-actions?changes-before= at mv 2.58 -> 400 (added in 2.66)'),
    );
    expectNova(
      await get(`${ia()}?limit=1`, '2.1'),
      recorded(N05, 'GET os-instance-actions?limit=1 at mv 2.1 (query ignored before 2.58)'),
    );
    expectNova(
      await get(`${ia()}?marker=req-00000000-0000-0000-0000-000000000000`, '2.58'),
      recorded(N05, 'GET os-instance-actions?marker=<unknown> mv 2.58 -> 400'),
    );
    expectNova(await get(`${ia()}?limit=-1`, '2.58'), recorded(N05, 'GET os-instance-actions?limit=-1 mv 2.58 -> 400'));
  });

  it('should answer 404 for an unknown request id and for another project', async () => {
    expectNova(
      await get(`${ia()}/req-00000000-0000-0000-0000-000000000000`, '2.84'),
      recorded(N05, 'GET os-instance-actions/{unknown request id} mv 2.84 -> 404'),
    );
    expectNova(await get(ia(), '2.84', c.t.other), recorded(N05, "GET os-instance-actions with other's token -> 404"));
    expectNova(
      await get(`${ia()}/${req.detach}`, '2.84', c.t.other),
      recorded(N05, "GET os-instance-actions/{detach request id} with other's token -> 404"),
    );
  });
});

describe('a detach that fails in nova-compute (nova-26/06)', () => {
  let vol: string;

  it('should attach a tagged volume as recorded', async () => {
    vol = c.sim.seedVolume({ project: 'demo', name: 'actions-tagged-vol', size: 1 });
    const post = await call(vas(), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.79',
      body: { volumeAttachment: { volumeId: vol, tag: 'data1', delete_on_termination: false } },
    });
    expectNova(post, recorded(N06, 'POST /servers/{id}/os-volume_attachments with tag mv 2.79'));
    req.taggedAttach = requestIdOf(post);
    await until(() => c.sim.volume(vol)?.status === 'in-use', "c.sim.volume(vol)?.status === 'in-use'");
    expectNova(await get(vas(), '2.79'), recorded(N06, 'GET /servers/{id}/os-volume_attachments mv 2.79 (tag shown)'));
    expectNova(
      await get(`${vas()}/${vol}`, '2.89'),
      recorded(N06, 'GET /servers/{id}/os-volume_attachments/{volume} mv 2.89'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'cinder GET volume (in-use)'),
    );
  });

  it('should run the event, then end it Error with Cinder available and the BDM kept (injected over /_sim/)', async () => {
    c.sim.setDelays({ detachMs: 400 });
    expect(
      (await call(`${c.urls.novaUrl}/_sim/faults/detach-error`, 'POST', { body: { volumeId: vol } })).json,
    ).toEqual({ ok: true });
    const del = await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo, mv: 'compute 2.79' });
    expectNova(del, recorded(N06, 'DELETE /servers/{id}/os-volume_attachments/{volume} mv 2.79 (tagged)'));
    req.failedDetach = requestIdOf(del);
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'poll +183 ms: cinder GET volume'),
    );
    expectNova(await get(vas(), '2.79'), recorded(N06, 'poll +256 ms: nova GET os-volume_attachments mv 2.79'));
    const running = await get(`${ia()}/${req.failedDetach}`, '2.84', c.t.admin);
    expectNova(running, recorded(N06, 'poll +316 ms: admin GET os-instance-actions/{detach request id} mv 2.84'));
    expect(running.json.instanceAction.updated_at).toBe(running.json.instanceAction.events[0].start_time);
    await until(
      async () => (await adminAction(req.failedDetach)).events[0].result !== null,
      '(await adminAction(req.failedDetach)).events[0].result !== null',
      3000,
    );
    c.sim.setDelays({ detachMs: 40 });
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'poll +465 ms: cinder GET volume'),
    );
    expectNova(await get(vas(), '2.79'), recorded(N06, 'poll +510 ms: nova GET os-volume_attachments mv 2.79'));
    expectNova(
      await get(`${ia()}/${req.failedDetach}`, '2.84', c.t.admin),
      recorded(N06, 'poll +556 ms: admin GET os-instance-actions/{detach request id} mv 2.84'),
    );
    expectNova(
      await get(`${c.nova}/servers/${server}`, '2.1'),
      recorded(N06, 'poll +617 ms: nova GET /servers/{id} mv 2.1'),
    );
  });

  it('should stay split once settled: Nova lists the attachment, Cinder has none', async () => {
    expectNova(
      await get(vas(), '2.79'),
      recorded(N06, 'GET /servers/{id}/os-volume_attachments mv 2.79 (still listed)'),
    );
    const show = await get(`${vas()}/${vol}`, '2.89');
    expect(show.json.volumeAttachment.attachment_id).toBe(c.sim.server(server)!.bdms[1]!.attachmentId);
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'cinder GET volume (available, no attachments)'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/attachments?volume_id=${vol}`, 'GET', { token: c.t.demo, mv: 'volume 3.27' }),
      recorded(N06, 'cinder GET /attachments?volume_id= mv 3.27'),
    );
    expectNova(await get(`${c.nova}/servers/${server}`, '2.1'), recorded(N06, 'GET /servers/{id} mv 2.1 as demo'));
    expectNova(await get(`${c.nova}/servers/${server}`, '2.89'), recorded(N06, 'GET /servers/{id} mv 2.89 as demo'));
  });

  it('should show the failure per microversion and role: result from 2.51, traceback and details to admins only', async () => {
    await replayActions(N06, ['2.1', '2.58', '2.84'], [['failed detach', req.failedDetach]]);
    expectNova(
      await get(`${ia()}/${req.taggedAttach}`, '2.84', c.t.admin),
      recorded(N06, 'GET /servers/{id}/os-instance-actions/{tagged attach request id} mv 2.84 as admin'),
    );
    expect(ids(await get(ia(), '2.1'))).toEqual([
      req.failedDetach,
      req.taggedAttach,
      req.detach,
      req.attach,
      req.create,
    ]);
  });

  it('should refuse a second detach and a re-attach without recording actions', async () => {
    const again = await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo, mv: 'compute 2.79' });
    expectNova(again, recorded(N06, 'DELETE /servers/{id}/os-volume_attachments/{volume} again mv 2.79'));
    expectNova(
      await get(ia(), '2.84'),
      recorded(N06, 'GET /servers/{id}/os-instance-actions mv 2.84 after the second DELETE'),
    );
    expectNova(
      await get(`${ia()}/${requestIdOf(again)}`, '2.84', c.t.admin),
      recorded(N06, 'GET /servers/{id}/os-instance-actions/{second DELETE request id} mv 2.84 as admin'),
    );
    expectNova(
      await get(vas(), '2.79'),
      recorded(N06, 'GET /servers/{id}/os-volume_attachments mv 2.79 after the second DELETE'),
    );
    const reattach = await call(vas(), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.79',
      body: { volumeAttachment: { volumeId: vol } },
    });
    expectNova(
      reattach,
      recorded(N06, 'POST the same volume again (cinder: available, nova: still has the BDM) mv 2.79'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'cinder GET volume after the second DELETE and the re-attach attempt'),
    );
    expect(ids(await get(ia(), '2.1'))).toHaveLength(5);
  });

  it('should delete the server with a delete action, readable after deletion from 2.21 only', async () => {
    expectNova(
      await call(`${c.nova}/servers/${server}`, 'DELETE', { token: c.t.demo }),
      recorded(N06, 'DELETE /servers/{id}'),
    );
    await until(
      async () => (await get(`${c.nova}/servers/${server}`, '2.1')).status === 404,
      "(await get(`${c.nova}/servers/${server}`, '2.1')).status === 404",
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'cinder GET tagged volume after server delete'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${bootVol}`, 'GET', { token: c.t.demo }),
      recorded(N06, 'cinder GET boot volume after server delete'),
    );
    expectNova(
      await get(ia(), '2.84'),
      recorded(N06, 'GET /servers/{id}/os-instance-actions mv 2.84 after delete (deleted server, 2.21+)'),
    );
    expectNova(
      await get(ia(), '2.1'),
      recorded(N06, 'GET /servers/{id}/os-instance-actions mv 2.1 after delete -> 404'),
    );
    expect((await get(ia(), '2.20')).status).toBe(404);
    expect((await get(ia(), '2.21')).status).toBe(200);
    expect((await get(ia(), '2.21', c.t.other)).status).toBe(404);
    const del = (await get(ia(), '2.58')).json.instanceActions[0];
    expect((await adminAction(del.request_id)).events).toEqual([
      expect.objectContaining({ event: 'compute_terminate_instance', result: 'Success', finish_time: del.updated_at }),
    ]);
  });
});
