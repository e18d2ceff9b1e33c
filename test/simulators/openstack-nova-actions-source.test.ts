/**
 * Nova's os-instance-actions beyond the recordings, from Nova 26's source: the actions of seeded
 * servers, a failed attach, swap, a stuck detach, a shelved-offloaded server's api_ events, the
 * caller's project and hostId, query validation, and the control API of the detach failure.
 */
import { createHash } from 'node:crypto';
import { call, requestIdOf, startCloud, type Cloud, type RawResponse } from './openstack-helpers';
import { until } from '../support/until';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud({ computeHost: 'real-nova' });
});
afterAll(async () => {
  await c.sim.close();
});

const ia = (sid: string): string => `${c.nova}/servers/${sid}/os-instance-actions`;
const vas = (sid: string): string => `${c.nova}/servers/${sid}/os-volume_attachments`;
const get = (url: string, mv: string, token = c.t.demo): Promise<RawResponse> =>
  call(url, 'GET', { token, mv: `compute ${mv}` });

describe("beyond the recordings (Nova 26's source)", () => {
  const actionsOf = async (sid: string, mv = '2.84', token = c.t.admin): Promise<any[]> =>
    (await get(ia(sid), mv, token)).json.instanceActions;
  const detail = async (sid: string, id: string, mv = '2.84', token = c.t.admin): Promise<any> =>
    (await get(`${ia(sid)}/${id}`, mv, token)).json.instanceAction;

  it('should leave create and attach_volume actions for seeded servers and attachments, a running create while building', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'seeded' });
    c.sim.attachNow(s, c.sim.seedVolume({ project: 'demo' }));
    const list = await actionsOf(s);
    expect(list.map((a) => [a.action, a.message, a.user_id, a.project_id])).toEqual([
      ['attach_volume', null, c.sim.server(s)!.userId, c.p.demo],
      ['create', null, c.sim.server(s)!.userId, c.p.demo],
    ]);
    expect((await detail(s, list[1].request_id)).events).toEqual([
      expect.objectContaining({ event: 'compute__do_build_and_run_instance', result: 'Success' }),
    ]);
    const building = c.sim.seedServer({ project: 'demo', name: 'building', vm_state: 'building' });
    const [create] = await actionsOf(building);
    expect((await detail(building, create.request_id)).events).toEqual([
      expect.objectContaining({ finish_time: null, result: null }),
    ]);
  });

  it('should end a failed attach Error (ClientException) after the rollback, and leave it running without rollback', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'attach-fails' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.failNextAttach(vol);
    const id = requestIdOf(
      await call(vas(s), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: vol } } }),
    );
    await until(
      async () => (await detail(s, id)).events[0].result !== null,
      '(await detail(s, id)).events[0].result !== null',
    );
    expect(c.sim.volume(vol)!.status).toBe('available');
    const failed = await detail(s, id);
    expect(failed).toMatchObject({
      action: 'attach_volume',
      message: 'Error',
      events: [{ event: 'compute_attach_volume', result: 'Error', details: 'ClientException' }],
    });
    expect(failed.events[0].traceback).toMatch(
      /^ {2}File ".*\/nova\/compute\/utils\.py", line 1439, in decorated_function\n/,
    );
    expect((await detail(s, id, '2.51', c.t.demo)).events).toEqual([
      {
        event: 'compute_attach_volume',
        start_time: failed.events[0].start_time,
        finish_time: failed.events[0].finish_time,
        result: 'Error',
      },
    ]);
    const vol2 = c.sim.seedVolume({ project: 'demo' });
    c.sim.failNextAttach(vol2, { rollback: false });
    const id2 = requestIdOf(
      await call(vas(s), 'POST', { token: c.t.demo, body: { volumeAttachment: { volumeId: vol2 } } }),
    );
    await until(
      () => c.sim.volume(vol2)!.attachments[0]?.attachStatus === 'error_attaching',
      "c.sim.volume(vol2)!.attachments[0]?.attachStatus === 'error_attaching'",
    );
    expect((await detail(s, id2)).events[0]).toMatchObject({ finish_time: null, result: null });
  });

  it('should keep a stuck detach running and record swap_volume for an admin swap', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'stuck-and-swap' });
    const stuck = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, stuck);
    c.sim.stickNextDetach(stuck);
    const id = requestIdOf(await call(`${vas(s)}/${stuck}`, 'DELETE', { token: c.t.demo }));
    expect(await detail(s, id)).toMatchObject({
      action: 'detach_volume',
      message: null,
      events: [{ event: 'compute_detach_volume', finish_time: null, result: null }],
    });
    const oldV = c.sim.seedVolume({ project: 'demo' });
    const newV = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, oldV);
    const admin = c.sim.issueToken({ user: 'admin', project: 'demo' });
    const swapId = requestIdOf(
      await call(`${vas(s)}/${oldV}`, 'PUT', { token: admin, body: { volumeAttachment: { volumeId: newV } } }),
    );
    await until(
      async () => (await detail(s, swapId)).events[0].result === 'Success',
      "(await detail(s, swapId)).events[0].result === 'Success'",
    );
    const swap = await detail(s, swapId);
    expect(swap).toMatchObject({
      action: 'swap_volume',
      user_id: 'admin',
      project_id: c.p.demo,
      events: [{ event: 'compute_swap_volume', host: 'real-nova' }],
    });
  });

  it('should record api_ events for a shelved-offloaded server and no event for its local delete', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'offloaded', vm_state: 'shelved_offloaded' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    const attach = requestIdOf(
      await call(vas(s), 'POST', {
        token: c.t.demo,
        mv: 'compute 2.20',
        body: { volumeAttachment: { volumeId: vol } },
      }),
    );
    const detach = requestIdOf(await call(`${vas(s)}/${vol}`, 'DELETE', { token: c.t.demo, mv: 'compute 2.20' }));
    expect((await detail(s, attach)).events).toEqual([
      expect.objectContaining({ event: 'api_attach_volume', result: 'Success' }),
    ]);
    expect((await detail(s, detach)).events).toEqual([
      expect.objectContaining({ event: 'api_detach_volume', result: 'Success' }),
    ]);
    const del = requestIdOf(await call(`${c.nova}/servers/${s}`, 'DELETE', { token: c.t.demo }));
    expect(await detail(s, del, '2.58')).toMatchObject({ action: 'delete', updated_at: null, events: [] });
    // changes-since compares updated_at, which an action without events does not have
    expect(
      (await get(`${ia(s)}?changes-since=2000-01-01T00:00:00Z`, '2.58')).json.instanceActions.map(
        (a: { action: string }) => a.action,
      ),
    ).toEqual(['detach_volume', 'attach_volume', 'create']);
  });

  it("should record the caller's project and hash hostId with it, and let readers list", async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'admin-acts' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, vol);
    const id = requestIdOf(await call(`${vas(s)}/${vol}`, 'DELETE', { token: c.t.admin }));
    const a = await detail(s, id);
    expect(a).toMatchObject({ user_id: 'admin', project_id: c.p.admin });
    expect(a.events[0].hostId).toBe(createHash('sha224').update(`${c.p.admin}real-nova`).digest('hex'));
    expect(await actionsOf(s, '2.1', c.t.reader)).toHaveLength(3);
  });

  it('should validate the 2.58/2.66 query as Nova does and link pages under a project-prefixed URL', async () => {
    const s = c.sim.seedServer({ project: 'demo', name: 'queries' });
    c.sim.attachNow(s, c.sim.seedVolume({ project: 'demo' }));
    const bad = async (query: string, mv = '2.66'): Promise<string> =>
      (await get(`${ia(s)}?${query}`, mv)).json.badRequest.message;
    expect(await bad('changes-since=2026-01-02T00:00:00&changes-before=2026-01-01T00:00:00')).toBe(
      'The value of changes-since must be less than or equal to changes-before.',
    );
    expect(await bad('changes-since=yesterday')).toBe(
      "Invalid input for query parameters changes-since. Value: yesterday. 'yesterday' is not a 'date-time'",
    );
    expect(await bad('limit=1&limit=2')).toBe(
      "Invalid input for query parameters limit. Value: ['1', '2']. ['1', '2'] is too long",
    );
    expect(await bad('limit=')).toBe("Invalid input for query parameters limit. Value: . '' is too short");
    expect(await bad('foo=1&limit=x')).toBe("Additional properties are not allowed ('foo' was unexpected)");
    const none = await get(`${ia(s)}?limit=0`, '2.58');
    expect(none.json).toEqual({ instanceActions: [] });
    expect((await get(`${ia(s)}?changes-since=2026-11-24T04:09:47.412119%2B00:00`, '2.58')).status).toBe(200);
    const prefixed = await get(
      `${c.nova}/${c.p.demo}/servers/${s}/os-instance-actions?marker=${(await actionsOf(s))[0].request_id}&limit=1`,
      '2.58',
    );
    expect(prefixed.json.links[0].href).toBe(
      `${c.nova}/${c.p.demo}/servers/${s}/os-instance-actions?limit=1&marker=${prefixed.json.instanceActions[0].request_id}`,
    );
  });

  it('should take the detach failure over /_sim/ for any volume, and refuse a bad body', async () => {
    expect(
      (await call(`${c.urls.cinderUrl}/_sim/faults/detach-error`, 'POST', { body: { volumeId: 5 } })).json,
    ).toEqual({ error: 'volumeId must be a string' });
    const s = c.sim.seedServer({ project: 'demo', name: 'any-volume' });
    const vol = c.sim.seedVolume({ project: 'demo' });
    c.sim.attachNow(s, vol);
    expect(
      (await call(`${c.urls.keystoneUrl.replace(/\/v3$/, '')}/_sim/faults/detach-error`, 'POST', {})).json,
    ).toEqual({ ok: true });
    const id = requestIdOf(await call(`${vas(s)}/${vol}`, 'DELETE', { token: c.t.demo }));
    await until(
      async () => (await detail(s, id)).events[0].result === 'Error',
      "(await detail(s, id)).events[0].result === 'Error'",
    );
    expect(c.sim.volume(vol)!.status).toBe('available');
    expect((await get(vas(s), '2.1')).json.volumeAttachments).toHaveLength(1);
  });
});
