/**
 * Nova against nova-26's recordings: servers, os-volume_attachments at 2.1 / 2.79 / 2.89 with the
 * Cinder side they drive (reserved → attaching → in-use; detaching → available), microversion
 * negotiation, and the server's delete. Attach variants, errors, the 2.85 update and injected
 * failures are in openstack-nova-attach.test.ts.
 */
import {
  call,
  expectRecorded,
  recorded,
  seedBootedServer,
  startCloud,
  type Cloud,
  type RawResponse,
  type Recorded,
} from './openstack-helpers';
import { until } from '../support/until';

const N00 = 'nova-26/00-boot-server.md';
const N01 = 'nova-26/01-volume-attachments-mv2.1.md';
const N02 = 'nova-26/02-volume-attachments-mv2.79.md';
const N03 = 'nova-26/03-volume-attachments-mv2.89.md';
const N04 = 'nova-26/04-delete-server.md';

let c: Cloud;
let server: string;
let bootVol: string;
beforeAll(async () => {
  c = await startCloud();
  ({ server, bootVol } = seedBootedServer(c, { server: 'rc-server', volume: 'nova-boot-vol' }));
});
afterAll(async () => {
  await c.sim.close();
});

/** Nova answers carry both Vary values; the recorder kept the last one only. */
function expectNova(res: RawResponse, rec: Recorded): void {
  expectRecorded(res, rec, ['content-type', 'openstack-api-version']);
  expect(res.headers.vary).toBe('OpenStack-API-Version, X-OpenStack-Nova-API-Version');
  expect(res.headers.vary).toContain(rec.headers.vary!);
  expect(res.headers['x-openstack-nova-api-version']).toBe(
    rec.headers['openstack-api-version']!.replace('compute ', ''),
  );
}

const vas = (sid = server): string => `${c.nova}/servers/${sid}/os-volume_attachments`;
const volumeStatus = (id: string): string | undefined => c.sim.volume(id)?.status;

describe('servers (nova-26/00)', () => {
  it('should answer the version document and the server views per microversion', async () => {
    expectNova(
      await call(`${c.nova}/`, 'GET', { token: c.t.demo }),
      recorded(N00, 'GET /v2.1/ (version, mv 2.1..max)'),
    );
    expectNova(
      await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo }),
      recorded(N00, 'GET /servers/{id} mv 2.1'),
    );
    expectNova(
      await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo, mv: 'compute 2.89' }),
      recorded(N00, 'GET /servers/{id} mv 2.89'),
    );
    expectNova(
      await call(`${c.nova}/servers/detail`, 'GET', { token: c.t.demo }),
      recorded(N00, 'GET /servers/detail mv 2.1'),
    );
    expectNova(await call(`${c.nova}/servers`, 'GET', { token: c.t.demo }), recorded(N00, 'GET /servers'));
    expectNova(
      await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.other }),
      recorded(N00, "GET /servers/{id} with other's token -> 404"),
    );
    expectNova(
      await call(vas(), 'GET', { token: c.t.demo, mv: 'compute 2.89' }),
      recorded(N00, 'GET /servers/{id}/os-volume_attachments (boot volume only) mv 2.89'),
    );
  });

  it('should show the boot volume in Cinder as recorded', async () => {
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${bootVol}`, 'GET', { token: c.t.demo }),
      recorded(N00, 'cinder GET boot volume (in-use, attached to the server)'),
    );
  });

  it('should negotiate microversions from either header, 406 above 2.93 and 400 when malformed', async () => {
    const legacy = await call(`${c.nova}/servers/${server}`, 'GET', {
      token: c.t.demo,
      headers: { 'x-openstack-nova-api-version': '2.79' },
    });
    expect(legacy.headers['openstack-api-version']).toBe('compute 2.79');
    expect(
      (await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo, mv: 'compute latest' })).headers[
        'openstack-api-version'
      ],
    ).toBe('compute 2.93');
    const high = await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo, mv: 'compute 2.101' });
    expect(high.status).toBe(406);
    expect(high.json).toEqual({
      computeFault: {
        code: 406,
        message: 'Version 2.101 is not supported by the API. Minimum is 2.1 and maximum is 2.93.',
      },
    });
    expect(
      (await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo, mv: 'compute 2' })).json.badRequest.message,
    ).toBe('API Version String 2 is of invalid format. Must be of format MajorNum.MinorNum.');
  });

  it('should answer 401 like keystonemiddleware without or with a bad token', async () => {
    const r = await call(`${c.nova}/servers`, 'GET', { token: 'bogus' });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Keystone uri="${c.urls.keystoneUrl.replace(/\/v3$/, '')}"`);
  });
});

/** One recorded attach/detach round trip (nova-26/01–03) at a microversion. */
async function roundTrip(file: string, mv: string, attachBody: object): Promise<void> {
  const vol = c.sim.seedVolume({ project: 'demo', name: `nova-data-${mv}`, size: 1 });
  const post = await call(vas(), 'POST', {
    token: c.t.demo,
    mv: `compute ${mv}`,
    body: { volumeAttachment: { volumeId: vol, ...attachBody } },
  });
  expectNova(post, recorded(file, `POST /servers/{id}/os-volume_attachments mv ${mv}`));
  // nova-26 timings: reserved → attaching → in-use, observed on Cinder
  const seen = new Set<string>([volumeStatus(vol)!]);
  // every status it passes through, so poll faster than the shortest transition
  await until(() => (seen.add(volumeStatus(vol)!), volumeStatus(vol) === 'in-use'), 'the volume in-use', 15_000, 5);
  expect([...seen]).toEqual(['reserved', 'attaching', 'in-use']);
  expectNova(
    await call(vas(), 'GET', { token: c.t.demo, mv: `compute ${mv}` }),
    recorded(file, `GET /servers/{id}/os-volume_attachments mv ${mv}`),
  );
  expectNova(
    await call(`${vas()}/${vol}`, 'GET', { token: c.t.demo, mv: `compute ${mv}` }),
    recorded(file, `GET /servers/{id}/os-volume_attachments/{volume} mv ${mv}`),
  );
  expectRecorded(
    await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
    recorded(file, 'cinder GET volume (attachments[] filled by nova)'),
  );
  expectRecorded(
    await call(`${c.cinder.demo}/attachments/detail?volume_id=${vol}`, 'GET', { token: c.t.demo, mv: 'volume 3.27' }),
    recorded(file, 'cinder GET /attachments?volume_id= mv 3.27 (new-style attachment made by nova)'),
  );
  expectNova(
    await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo, mv: `compute ${mv}` }),
    recorded(file, `DELETE /servers/{id}/os-volume_attachments/{volume} mv ${mv}`),
  );
  expect(volumeStatus(vol)).toBe('detaching');
  await until(() => volumeStatus(vol) === 'available', "volumeStatus(vol) === 'available'");
  expectNova(
    await call(`${vas()}/${vol}`, 'GET', { token: c.t.demo, mv: `compute ${mv}` }),
    recorded(file, `GET /servers/{id}/os-volume_attachments/{volume} after detach -> 404`),
  );
  expectRecorded(
    await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo }),
    recorded(file, 'cinder GET volume after detach'),
  );
  expectRecorded(
    await call(`${c.cinder.demo}/volumes/${vol}`, 'DELETE', { token: c.t.demo }),
    recorded(file, 'cinder DELETE data volume'),
  );
}

describe('os-volume_attachments round trips (nova-26/01–03)', () => {
  it('should attach and detach at 2.1 and answer the recorded errors', async () => {
    await roundTrip(N01, '2.1', {});
    const vol = c.sim.seedVolume({ project: 'demo', name: 'again' });
    await call(vas(), 'POST', { token: c.t.demo, mv: 'compute 2.1', body: { volumeAttachment: { volumeId: vol } } });
    const again = await call(vas(), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.1',
      body: { volumeAttachment: { volumeId: vol } },
    });
    expectNova(again, recorded(N01, 'POST again with the same (in-use) volume -> 400/409'));
    expect(again.json.badRequest.message).toBe(
      `Invalid volume: volume ${vol} is already attached to instances: ${server}`,
    );
    expectNova(
      await call(vas(), 'POST', {
        token: c.t.demo,
        mv: 'compute 2.1',
        body: { volumeAttachment: { volumeId: '00000000-0000-0000-0000-000000000000' } },
      }),
      recorded(N01, 'POST with a missing volume -> 404'),
    );
    expectNova(
      await call(vas(), 'GET', { token: c.t.other, mv: 'compute 2.1' }),
      recorded(N01, "GET os-volume_attachments with other's token -> 404"),
    );
    await until(() => volumeStatus(vol) === 'in-use', "volumeStatus(vol) === 'in-use'");
    await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo });
    await until(() => volumeStatus(vol) === 'available', "volumeStatus(vol) === 'available'");
    expectNova(
      await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo, mv: 'compute 2.1' }),
      recorded(N01, 'DELETE again (not attached) -> 404'),
    );
  });

  it('should attach and detach at 2.79 (tag, delete_on_termination)', async () => {
    await roundTrip(N02, '2.79', { delete_on_termination: false });
  });

  it('should attach and detach at 2.89 (attachment_id, bdm_uuid, no id)', async () => {
    await roundTrip(N03, '2.89', { delete_on_termination: false });
  });

  it('should list the BDM while the attach is still in progress and refuse to detach it then', async () => {
    const vol = c.sim.seedVolume({ project: 'demo' });
    await call(vas(), 'POST', { token: c.t.demo, mv: 'compute 2.1', body: { volumeAttachment: { volumeId: vol } } });
    const list = await call(vas(), 'GET', { token: c.t.demo });
    expect(list.json.volumeAttachments.map((a: { volumeId: string }) => a.volumeId)).toContain(vol);
    expect((await call(`${c.cinder.demo}/volumes/${vol}`, 'GET', { token: c.t.demo })).json.volume.attachments).toEqual(
      [],
    );
    const early = await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo });
    expect(early.status).toBe(400);
    expect(early.json.badRequest.message).toMatch(
      /^Invalid volume: Invalid input received: Invalid volume: Unable to detach volume\. Volume status must be 'in-use' and attach_status must be 'attached' to detach\. \(HTTP 400\) \(Request-ID: req-[0-9a-f-]+\)$/,
    );
    await until(() => volumeStatus(vol) === 'in-use', "volumeStatus(vol) === 'in-use'");
    await call(`${vas()}/${vol}`, 'DELETE', { token: c.t.demo });
    await until(() => volumeStatus(vol) === 'available', "volumeStatus(vol) === 'available'");
  });
});

describe('server delete (nova-26/04)', () => {
  it('should answer 204, then detach the boot volume and forget the server', async () => {
    const del = await call(`${c.nova}/servers/${server}`, 'DELETE', { token: c.t.demo });
    expectNova(del, recorded(N04, 'DELETE /servers/{id}'));
    await until(
      async () => (await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo })).status === 404,
      "(await call(`${c.nova}/servers/${server}`, 'GET', { token: c.t.demo })).status === 404",
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${bootVol}`, 'GET', { token: c.t.demo }),
      recorded(N04, 'cinder GET boot volume after server delete'),
    );
  });
});
