/**
 * Nova's os-volume_attachments beyond the recorded round trips, as nova-26 answers: attach variants
 * and errors (device, tag, paging, root volumes, vm_states, multiattach, 2.101's empty 202), the
 * update (PUT: delete_on_termination from 2.85, an admin's swap) and injected attach/detach failures.
 */
import { call, FAST, seedBootedServer, sleep, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

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

const vas = (sid = server): string => `${c.nova}/servers/${sid}/os-volume_attachments`;
const volumeStatus = (id: string): string | undefined => c.sim.volume(id)?.status;

describe('attach variants and errors', () => {
  it('should accept a device, tag (>= 2.49) and list with limit/offset (strict params from 2.75)', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'tagged' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    const old = await call(vas(s), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.48',
      body: { volumeAttachment: { volumeId: vol, tag: 'x' } },
    });
    expect(old.json.badRequest.message).toBe(
      `Invalid input for field/attribute volumeAttachment. Value: {'volumeId': '${vol}', 'tag': 'x'}. Additional properties are not allowed ('tag' was unexpected)`,
    );
    const r = await call(vas(s), 'POST', {
      token: c.t.demo,
      mv: 'compute 2.70',
      body: { volumeAttachment: { volumeId: vol, device: '/dev/vdz', tag: 'data' } },
    });
    expect(r.json).toEqual({
      volumeAttachment: { id: vol, serverId: s, volumeId: vol, device: '/dev/vdz', tag: 'data' },
    });
    const second = c.sim.seedVolume({ project: 'demo' });
    expect(
      (
        await call(vas(s), 'POST', {
          token: c.t.demo,
          body: { volumeAttachment: { volumeId: second, device: '/dev/vdz' } },
        })
      ).json,
    ).toEqual({ conflictingRequest: { code: 409, message: 'The supplied device path (/dev/vdz) is in use.' } });
    expect(
      (await call(vas(s), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: second } } })).json
        .volumeAttachment.device,
    ).toBe('/dev/sdb');
    expect((await call(`${vas(s)}?limit=1&offset=1`, 'GET', { token: c.t.demo })).json.volumeAttachments).toHaveLength(
      1,
    );
    expect((await call(`${vas(s)}?foo=1`, 'GET', { token: c.t.demo, mv: 'compute 2.74' })).status).toBe(200);
    expect((await call(`${vas(s)}?foo=1`, 'GET', { token: c.t.demo, mv: 'compute 2.75' })).json).toEqual({
      badRequest: { code: 400, message: "Additional properties are not allowed ('foo' was unexpected)" },
    });
  });

  it('should refuse root volumes, bad vm_states and multiattach below 2.60', async () => {
    expect((await call(`${vas()}/${bootVol}`, 'DELETE', { token: c.t.demo })).json).toEqual({
      badRequest: { code: 400, message: 'Cannot detach a root device volume' },
    });
    const broken = c.sim.seedServer({ project: 'demo', name: 'broken', vm_state: 'error' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    expect(
      (await call(vas(broken), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: vol } } })).json,
    ).toEqual({
      conflictingRequest: {
        code: 409,
        message: `Cannot 'attach_volume' instance ${broken} while it is in vm_state error`,
      },
    });
    const shelved = c.sim.seedServer({ project: 'demo', name: 'shelved', vm_state: 'shelved_offloaded' });
    expect(
      (
        await call(vas(shelved), 'POST', {
          token: c.t.demo,
          mv: 'compute 2.19',
          body: { volumeAttachment: { volumeId: vol } },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await call(vas(shelved), 'POST', {
          token: c.t.demo,
          mv: 'compute 2.20',
          body: { volumeAttachment: { volumeId: vol } },
        })
      ).status,
    ).toBe(200);
    expect(volumeStatus(vol)).toBe('in-use');
    const multi = c.sim.seedVolume({ project: 'demo', multiattach: true });
    expect(
      (
        await call(vas(), 'POST', {
          token: c.t.demo,
          mv: 'compute 2.59',
          body: { volumeAttachment: { volumeId: multi } },
        })
      ).json.badRequest.message,
    ).toBe('Multiattach volumes are only supported starting with compute API version 2.60.');
    expect(
      (
        await call(vas(), 'POST', {
          token: c.t.demo,
          mv: 'compute 2.60',
          body: { volumeAttachment: { volumeId: multi } },
        })
      ).status,
    ).toBe(200);
    await until(() => volumeStatus(multi) === 'in-use', "volumeStatus(multi) === 'in-use'");
    expect(
      (
        await call(vas(c.sim.seedServer({ project: 'demo', name: 'second' })), 'POST', {
          token: c.t.demo,
          mv: 'compute 2.60',
          body: { volumeAttachment: { volumeId: multi } },
        })
      ).status,
    ).toBe(200);
    await until(
      () => c.sim.volume(multi)!.attachments.filter((a) => a.attachStatus === 'attached').length === 2,
      "c.sim.volume(multi)!.attachments.filter((a) => a.attachStatus === 'attached').length === 2",
    );
  });

  it('should answer 202 without a body from 2.101 when Nova supports it', async () => {
    const { sim, t, nova } = await startCloud({
      novaMaxVersion: '2.101',
      delays: { attachMs: 5, attachCompleteMs: 5 },
    });
    try {
      const s = sim.seedServer({ project: 'demo', name: 's' });
      const v = sim.seedVolume({ project: 'demo' });
      const r = await call(`${nova}/servers/${s}/os-volume_attachments`, 'POST', {
        token: t.demo,
        mv: 'compute 2.101',
        body: { volumeAttachment: { volumeId: v } },
      });
      expect(r.status).toBe(202);
      expect(r.text).toBe('');
      await until(() => sim.volume(v)?.status === 'in-use', "sim.volume(v)?.status === 'in-use'");
    } finally {
      await sim.close();
    }
  });
});

describe('update (PUT)', () => {
  it('should change delete_on_termination from 2.85 and reject other changes', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'upd' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, vol, { device: '/dev/sdb' });
    const url = `${vas(s)}/${vol}`;
    expect(
      (await call(url, 'PUT', { token: c.t.demo, mv: 'compute 2.84', body: { volumeAttachment: { volumeId: vol } } }))
        .json,
    ).toEqual({
      forbidden: {
        code: 403,
        message: "Policy doesn't allow os_compute_api:os-volumes-attachments:swap to be performed.",
      },
    });
    expect(
      (
        await call(url, 'PUT', {
          token: c.t.demo,
          mv: 'compute 2.85',
          body: { volumeAttachment: { volumeId: vol, delete_on_termination: true } },
        })
      ).status,
    ).toBe(202);
    expect(
      (await call(url, 'GET', { token: c.t.demo, mv: 'compute 2.85' })).json.volumeAttachment.delete_on_termination,
    ).toBe(true);
    expect(
      (
        await call(url, 'PUT', {
          token: c.t.demo,
          mv: 'compute 2.85',
          body: { volumeAttachment: { volumeId: vol, device: '/dev/sdc' } },
        })
      ).json,
    ).toEqual({ badRequest: { code: 400, message: 'The device property is not mutable' } });
  });

  it('should swap volumes for an admin', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'swap' });
    const oldV = c.sim.seedVolume({ project: 'demo', size: 1 });
    const newV = c.sim.seedVolume({ project: 'demo', size: 2 });
    c.sim.attachNow(s, oldV, { device: '/dev/sdb' });
    const admin = c.sim.issueToken({ user: 'admin', project: 'demo' });
    expect(
      (await call(`${vas(s)}/${oldV}`, 'PUT', { token: admin, body: { volumeAttachment: { volumeId: newV } } })).status,
    ).toBe(202);
    expect(volumeStatus(oldV)).toBe('detaching');
    await until(
      () => volumeStatus(newV) === 'in-use' && volumeStatus(oldV) === 'available',
      "volumeStatus(newV) === 'in-use' && volumeStatus(oldV) === 'available'",
    );
    expect((await call(vas(s), 'GET', { token: c.t.demo })).json.volumeAttachments).toEqual([
      { id: newV, volumeId: newV, serverId: s, device: '/dev/sdb' },
    ]);
  });
});

describe('injected failures', () => {
  it('should end a failed attach in error_attaching with a user message, then roll back like Nova', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'fail' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.setDelays({ attachRollbackMs: 60 });
    c.sim.failNextAttach(vol);
    expect(
      (await call(vas(s), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: vol } } })).status,
    ).toBe(200);
    await until(
      () => c.sim.volume(vol)!.attachments[0]?.attachStatus === 'error_attaching',
      "c.sim.volume(vol)!.attachments[0]?.attachStatus === 'error_attaching'",
    );
    expect(volumeStatus(vol)).toBe('reserved');
    const atts = await call(`${c.cinder.demo}/attachments?volume_id=${vol}`, 'GET', {
      token: c.t.demo,
      mv: 'volume 3.27',
    });
    expect(atts.json.attachments[0].status).toBe('error_attaching');
    const msgs = await call(`${c.cinder.demo}/messages?resource_uuid=${vol}`, 'GET', {
      token: c.t.demo,
      mv: 'volume 3.5',
    });
    expect(
      msgs.json.messages.map((m: { event_id: string; user_message: string }) => [m.event_id, m.user_message]),
    ).toEqual([['VOLUME_VOLUME_004_001', 'update attachment:An unknown error occurred.']]);
    await until(() => volumeStatus(vol) === 'available', "volumeStatus(vol) === 'available'");
    expect(c.sim.volume(vol)!.attachments).toEqual([]);
    expect((await call(vas(s), 'GET', { token: c.t.demo })).json.volumeAttachments).toEqual([]);
    c.sim.setDelays({ attachRollbackMs: FAST.attachRollbackMs });
  });

  it('should leave the failed attachment in place without rollback', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'fail2' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.failNextAttach(undefined, { rollback: false });
    await call(vas(s), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: vol } } });
    await until(
      () => c.sim.volume(vol)!.attachments[0]?.attachStatus === 'error_attaching',
      "c.sim.volume(vol)!.attachments[0]?.attachStatus === 'error_attaching'",
    );
    await sleep(50);
    expect(volumeStatus(vol)).toBe('reserved');
    expect((await call(vas(s), 'GET', { token: c.t.demo })).json.volumeAttachments).toHaveLength(1);
  });

  it('should keep a stuck detach in detaching, with the BDM still listed', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'stuck' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, vol);
    c.sim.stickNextDetach(vol);
    expect((await call(`${vas(s)}/${vol}`, 'DELETE', { token: c.t.demo })).status).toBe(202);
    await sleep(80);
    expect(volumeStatus(vol)).toBe('detaching');
    expect((await call(vas(s), 'GET', { token: c.t.demo })).json.volumeAttachments).toHaveLength(1);
    expect(
      (
        await call(`${c.cinder.demo}/volumes/${vol}/action`, 'POST', {
          token: c.t.demo,
          body: { 'os-roll_detaching': null },
        })
      ).status,
    ).toBe(202);
    expect(volumeStatus(vol)).toBe('in-use');
  });
});
