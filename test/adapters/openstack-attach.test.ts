/**
 * Attach and detach through the OpenStack adapter against the real simulator: to servers through
 * Nova (completion on Cinder, failure signals from Nova's instance action for the request), and
 * to hosts through Cinder's attachments API (the connector's os-brick keys on the wire).
 */
import type { VolumeRef } from '../../adapters/contract/model';

import { calls, drive, startAdapterCloud, type AdapterCloud } from './openstack-helpers';
import { until } from '../support/until';

let c: AdapterCloud;
let server: string;
const ref = (nativeId: string): VolumeRef => ({ backend: 'os', namespace: c.p.demo, nativeId });

beforeEach(async () => {
  c = await startAdapterCloud();
  server = c.sim.seedServer({ project: 'demo', name: 'web-1' });
});
afterEach(() => c.close());

describe('OpenStack adapter: server attachments through Nova', () => {
  it("should attach, keep Nova's request id in the rule and succeed once Cinder shows in-use with the server", async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'data' });
    c.sim.setDelays({ attachMs: 1000 }); // long enough for the first check to see it under way, also on a loaded machine
    const a = await c.backend.attachVolume(
      ref(vol),
      { kind: 'server', serverId: server.toUpperCase(), tag: 'data1' },
      c.as.demo,
    );
    expect(a.result).toMatchObject({
      state: 'ATTACHING',
      consumerId: server,
      device: expect.stringMatching(/^\/dev\//),
      tag: 'data1',
    });
    const rule = a.pending!.rule;
    expect(rule).toMatchObject({
      name: 'serverAttach',
      params: { volumeId: vol, serverId: server, novaRequestId: expect.stringMatching(/^req-/) },
      seen: {},
    });
    c.sim.clearRequests();
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'in-use' });
    // The attach was seen under way (reserved/attaching), a fact kept in the stored rule.
    expect(d.rule.seen).toEqual({ started: true });
    expect(calls(c.sim.requests(), 'nova')).toContain(
      `GET /v2.1/servers/${server}/os-instance-actions/${rule.params.novaRequestId}`,
    );
  });

  it("should fail an attach that Nova rolled back, naming the failed step, the request and Cinder's message", async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'flaky' });
    c.sim.failNextAttach(vol);
    const a = await c.backend.attachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({
      state: 'FAILED',
      backendStatus: 'available',
      reason: `Nova failed the attach at compute_attach_volume (request ${a.pending!.rule.params.novaRequestId}): update attachment:An unknown error occurred.`,
    });
  });

  it('should detach and succeed once Nova no longer lists the volume', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'data' });
    c.sim.attachNow(server, vol);
    c.sim.setDelays({ detachMs: 1000 }); // long enough for the first check to see it under way, also on a loaded machine
    const a = await c.backend.detachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    expect(a.pending!.rule).toMatchObject({
      name: 'serverDetach',
      params: { volumeId: vol, serverId: server, novaRequestId: expect.stringMatching(/^req-/) },
    });
    const d = await drive(c.backend, a.pending, c.as.demo);
    // Done only once Nova stops listing it, whatever Cinder said before.
    expect(d.checks[0]!.progress.state).toBe('RUNNING');
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'available' });
    expect((await c.backend.listServerAttachments([server], c.as.demo)).get(server)).toEqual([]);
  });

  it('should fail a detach Nova failed in compute at once, with the step and request id, and show the split attachment as ERROR', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'tagged' });
    c.sim.attachNow(server, vol, { tag: 'data1' });
    c.sim.failNextDetach(vol);
    const a = await c.backend.detachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    const requestId = a.pending!.rule.params.novaRequestId as string;
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({
      state: 'FAILED',
      backendStatus: 'available',
      reason: `Nova failed the detach at compute_detach_volume (request ${requestId}); Cinder shows the volume available while Nova still lists it on server ${server}`,
    });
    // At once: the check after Cinder let go, not the deadline (5 s here; 120 s by default).
    expect(d.ms).toBeLessThan(1000);
    expect(d.checks.slice(0, -1).every((x) => x.progress.state === 'RUNNING')).toBe(true);
    // The volume follows Cinder; the attachment Nova still lists is ERROR and says why.
    expect(await c.backend.getVolume(ref(vol), c.as.demo)).toMatchObject({ status: 'AVAILABLE', attachments: [] });
    const listed = (await c.backend.listServerAttachments([server], c.as.demo)).get(server)!;
    expect(listed).toEqual([
      expect.objectContaining({
        consumerId: server,
        state: 'ERROR',
        backendState: 'available',
        tag: 'data1',
        stateReason: `Nova lists volume ${vol} on server ${server} but Cinder shows the volume available with no attachment to this server: Nova and Cinder disagree (a detach that failed in Nova's compute service after Cinder let go leaves this)`,
      }),
    ]);
  });

  it('should add the exception name an admin sees (2.84+) to the reason, never the traceback', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'tagged' });
    c.sim.attachNow(server, vol);
    c.sim.failNextDetach(vol);
    const a = await c.backend.detachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.admin);
    const d = await drive(c.backend, a.pending, c.as.admin);
    expect(d.last.state).toBe('FAILED');
    expect((d.last as { reason: string }).reason).toMatch(
      new RegExp(
        `^Nova failed the detach at compute_detach_volume \\(request ${a.pending!.rule.params.novaRequestId}\\): AttributeError; Cinder shows`,
      ),
    );
    expect((d.last as { reason: string }).reason).not.toMatch(/Traceback|File "|\.py/);
  });

  it('should still fail at once below compute 2.51, where a member sees the action failed but not its events', async () => {
    await c.close();
    c = await startAdapterCloud({ novaMaxVersion: '2.50' });
    server = c.sim.seedServer({ project: 'demo', name: 'old' });
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    c.sim.attachNow(server, vol);
    c.sim.failNextDetach(vol);
    const a = await c.backend.detachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect((d.last as { reason: string }).reason).toMatch(
      new RegExp(
        `^Nova reports the detach failed \\(request ${a.pending!.rule.params.novaRequestId}; the failed step shows from compute microversion 2\\.51\\); Cinder shows the volume available`,
      ),
    );
  });

  it('should refuse a Nomad detach target and a Nova option the cloud is too old for, before sending', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    await expect(c.backend.detachVolume(ref(vol), { kind: 'node', nodeId: 'n1' }, c.as.demo)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    await c.close();
    c = await startAdapterCloud({ novaMaxVersion: '2.48' });
    server = c.sim.seedServer({ project: 'demo', name: 'old' });
    c.sim.clearRequests();
    await expect(
      c.backend.attachVolume(ref(vol), { kind: 'server', serverId: server, tag: 't' }, c.as.demo),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND' });
    expect(calls(c.sim.requests(), 'nova').filter((x) => x.startsWith('POST'))).toEqual([]);
  });
});

describe('OpenStack adapter: host attachments through Cinder', () => {
  const connector = {
    host: 'node-7',
    ip: '10.0.0.7',
    initiator: 'iqn.1994-05.com.redhat:node7',
    platform: 'x86_64',
    osType: 'linux2',
    multipath: false,
    doLocalAttach: false,
    systemUuid: '4c4c4544-0047',
    nqn: 'nqn.2014-08.org.nvmexpress:uuid:1',
  };

  it("should attach a host with the connector's os-brick keys, complete it at once, and detach it", async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'raw' });
    await c.backend.getVolume(ref(vol), c.as.demo); // session and version document out of the way
    c.sim.clearRequests();
    const a = await c.backend.attachVolume(ref(vol), { kind: 'host', connector }, c.as.demo);
    expect(a.result).toMatchObject({
      state: 'ATTACHED',
      backendState: 'attached',
      consumer: { __typename: 'VolumeHostConsumer' },
      access: 'READ_WRITE',
    });
    const attachmentId = a.result!.nativeId!;
    expect(calls(c.sim.requests(), 'cinder')).toEqual([
      'POST /v3/{p}/attachments',
      `POST /v3/{p}/attachments/${attachmentId}/action os-complete`,
      `GET /v3/{p}/attachments/${attachmentId}`,
    ]);
    expect(c.sim.requests().find((e) => e.method === 'POST' && e.path.endsWith('/attachments'))!.microversion).toMatch(
      /^volume 3\.\d+$/,
    );
    const stored = c.sim.volume(vol)!.attachments.find((x) => x.id === attachmentId)!;
    expect(Object.keys(stored.connector!).sort()).toEqual(
      ['do_local_attach', 'host', 'initiator', 'ip', 'multipath', 'nqn', 'os_type', 'platform', 'system uuid'].sort(),
    );
    expect(stored.connector).toMatchObject({
      os_type: 'linux2',
      do_local_attach: false,
      'system uuid': '4c4c4544-0047',
    });
    expect((await drive(c.backend, a.pending, c.as.demo)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
    });

    const det = await c.backend.detachVolume(ref(vol), { kind: 'hostAttachment', attachmentId }, c.as.demo);
    expect(det.pending!.rule).toEqual({ name: 'hostDetach', params: { volumeId: vol, attachmentId }, seen: {} });
    expect((await drive(c.backend, det.pending, c.as.demo)).last.state).toBe('SUCCEEDED');
    expect(c.sim.volume(vol)!.status).toBe('available');
  });

  it('should go through the attachments API step by step and list the records', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'steps' });
    const reserved = await c.backend.reserveHostAttachment(ref(vol), c.as.demo);
    expect(reserved).toMatchObject({ state: 'ATTACHING', backendState: 'reserved' });
    expect(c.sim.volume(vol)!.status).toBe('reserved');
    const updated = await c.backend.updateHostAttachment(
      ref(vol),
      reserved.nativeId!,
      { host: 'node-8', osType: 'linux2' },
      c.as.demo,
    );
    expect(updated).toMatchObject({ nativeId: reserved.nativeId, backendState: 'attaching' });
    await c.backend.completeHostAttachment(ref(vol), reserved.nativeId!, c.as.demo);
    await until(() => c.sim.volume(vol)!.status === 'in-use', "c.sim.volume(vol)!.status === 'in-use'");
    const page = await c.backend.listHostAttachments(c.p.demo, { volumeId: vol, limit: 10, token: null }, c.as.demo);
    expect(page).toEqual({
      items: [expect.objectContaining({ nativeId: reserved.nativeId, state: 'ATTACHED' })],
      next: null,
    });
  });
});
