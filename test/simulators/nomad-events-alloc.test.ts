/**
 * The simulator's additions for the live path: `Allocation` topic events (nomad/state/events.go:
 * `PlanResult` for placements and scheduler stops, `AllocationUpdated` for client updates, none
 * for GC), `GET /v1/acl/token/self`, and token revocation over the control API.
 */
import { request } from 'undici';
import type { NomadSimulator } from '../../simulators/nomad';
import { call, MGMT, NODE1, startSim } from './nomad-helpers';
import { until } from '../support/until';

let sim: NomadSimulator;
let url: string;

beforeEach(async () => {
  ({ sim, url } = await startSim({ eventHeartbeatMs: 100 }));
});

afterEach(async () => {
  await sim.close();
});

/** Collects the frames of one stream until `close`. */
async function collect(path: string, token = MGMT): Promise<{ status: number; frames: any[]; close: () => void }> {
  const res = await request(url + path, { headers: { 'x-nomad-token': token } });
  const frames: any[] = [];
  let buf = '';
  res.body.setEncoding('utf8');
  res.body.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line !== '{}') frames.push(JSON.parse(line));
    }
  });
  res.body.on('error', () => undefined);
  return { status: res.statusCode, frames, close: () => res.body.destroy() };
}

describe('Allocation topic', () => {
  it('publishes placements, client updates and scheduler stops, not GC', async () => {
    sim.addNamespace('analytics');
    sim.seedVolume({ ID: 'v1', Namespace: 'analytics', PluginID: 'hostpath' });
    const s = await collect('/v1/event/stream?topic=Allocation&namespace=*');
    const id = sim.placeAllocation({
      namespace: 'analytics',
      jobId: 'web',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'v1', mode: 'write' }],
    });
    sim.setAllocationStatus(id, { clientStatus: 'running' });
    sim.setAllocationStatus(id, { desiredStatus: 'stop' });
    sim.gcAllocation(id);
    await until(() => s.frames.length >= 3, 's.frames.length >= 3');
    await new Promise((r) => setTimeout(r, 50));
    s.close();
    const events = s.frames.flatMap((f) => f.Events);
    expect(events.map((e) => [e.Topic, e.Type, e.Key, e.Namespace])).toEqual([
      ['Allocation', 'PlanResult', id, 'analytics'],
      ['Allocation', 'AllocationUpdated', id, 'analytics'],
      ['Allocation', 'PlanResult', id, 'analytics'],
    ]);
    expect(events[0].FilterKeys).toEqual(['web', '']);
    expect(events[1].Payload.Allocation).toMatchObject({
      ID: id,
      Namespace: 'analytics',
      JobID: 'web',
      Job: null,
      NodeID: NODE1,
      NodeName: 'client-1',
      ClientStatus: 'running',
      DesiredStatus: 'run',
    });
    expect(events[2].Payload.Allocation).toMatchObject({ ClientStatus: 'running', DesiredStatus: 'stop' });
    expect(s.frames.every((f) => f.Events.every((e: any) => e.Index === f.Index))).toBe(true);
  });

  it('needs read-job in the namespace', async () => {
    sim.addToken({ secret: 'csi-only', namespaces: {} });
    const denied = await call(url, 'GET', '/v1/event/stream?topic=Allocation', { token: 'csi-only' });
    expect([denied.status, denied.text]).toEqual([403, 'Permission denied']);
  });
});

describe('GET /v1/acl/token/self', () => {
  it('answers the token for a known secret and 404 ACL token not found otherwise', async () => {
    sim.addToken({ secret: 'reader', name: 'reader', namespaces: { default: 'read' } });
    const ok = await call(url, 'GET', '/v1/acl/token/self', { token: 'reader' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ Name: 'reader', Type: 'client', SecretID: 'reader' });
    const unknown = await call(url, 'GET', '/v1/acl/token/self', { token: 'nope' });
    expect([unknown.status, unknown.text, unknown.headers['content-type']]).toEqual([
      404,
      'ACL token not found',
      'text/plain; charset=utf-8',
    ]);
    expect((await call(url, 'GET', '/v1/acl/token/self')).status).toBe(404);
    expect((await call(url, 'PUT', '/v1/acl/token/self', { token: 'reader' })).status).toBe(405);
  });

  it('answers 400 when ACLs are disabled', async () => {
    await sim.close();
    ({ sim, url } = await startSim({ acl: { enabled: false } }));
    const r = await call(url, 'GET', '/v1/acl/token/self', { token: 'x' });
    expect([r.status, r.text]).toEqual([400, 'ACL support disabled']);
  });

  it('forgets a token deleted over the control API', async () => {
    sim.addToken({ secret: 'temp', namespaces: { default: 'read' } });
    expect((await call(url, 'GET', '/v1/volumes?type=csi', { token: 'temp' })).status).toBe(200);
    const del = await request(`${url}/_sim/tokens/temp`, { method: 'DELETE' });
    expect(del.statusCode).toBe(200);
    await del.body.text();
    expect((await call(url, 'GET', '/v1/volumes?type=csi', { token: 'temp' })).status).toBe(403);
    expect((await call(url, 'GET', '/v1/acl/token/self', { token: 'temp' })).status).toBe(404);
    const again = await request(`${url}/_sim/tokens/temp`, { method: 'DELETE' });
    expect(again.statusCode).toBe(404);
    await again.body.text();
  });
});
