/**
 * `/v1/event/stream` (hashicorp/nomad command/agent/event_endpoint.go, nomad/stream/): ndjson
 * frames, heartbeats, topics and filter keys, replay from `index`, payload sanitisation, ACL and
 * shutdown.
 */
import { request } from 'undici';
import type { NomadSimulator } from '../../simulators/nomad';
import { call, fixture, keys, MGMT, NODE1, startSim } from './nomad-helpers';

let sim: NomadSimulator;
let url: string;
const streams: Array<{ close: () => void }> = [];

beforeEach(async () => {
  ({ sim, url } = await startSim({ eventHeartbeatMs: 100 }));
});

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await sim.close();
});

interface Stream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  lines: string[];
  /** Waits until a line satisfies `pred`; returns it. */
  waitFor(pred: (line: string) => boolean, ms?: number): Promise<string>;
  frames(): Array<{ Index: number; Events: any[] }>;
  /** Resolves when the server ends the body. */
  ended: Promise<void>;
  close(): void;
}

async function open(path: string, token = MGMT): Promise<Stream> {
  const res = await request(url + path, { headers: { 'x-nomad-token': token } });
  const lines: string[] = [];
  let buf = '';
  const waiters = new Set<() => void>();
  res.body.setEncoding('utf8');
  res.body.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    for (const w of waiters) w();
  });
  res.body.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => {
    res.body.on('end', resolve);
    res.body.on('close', resolve);
    res.body.on('error', () => resolve());
  });
  res.body.resume();
  const s: Stream = {
    ended,
    status: res.statusCode,
    headers: res.headers,
    lines,
    waitFor: (pred, ms = 2000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = lines.find(pred);
          if (hit === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching line in ${JSON.stringify(lines)}`));
        }, ms);
        if (!check()) waiters.add(check);
      }),
    frames: () => lines.filter((l) => l !== '{}').map((l) => JSON.parse(l) as { Index: number; Events: any[] }),
    close: () => res.body.destroy(),
  };
  streams.push(s);
  return s;
}

const hasType =
  (type: string, key?: string) =>
  (l: string): boolean =>
    l.includes(`"Type":"${type}"`) && (key === undefined || l.includes(`"Key":"${key}"`));

describe('event stream', () => {
  it('starts with a {} heartbeat, then sends CSIVolume frames shaped like Nomad’s', async () => {
    const s = await open('/v1/event/stream?topic=CSIVolume');
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('application/json');
    expect(s.headers['cache-control']).toBe('no-cache');
    await s.waitFor((l) => l === '{}');
    expect(s.lines[0]).toBe('{}');

    sim.seedVolume({
      ID: 'volume-id1',
      Name: 'volume id1',
      PluginID: 'aws-ebs0',
      ExternalID: 'vol-abcdef',
      MountOptions: { FSType: 'ext4', MountFlags: ['ro'] },
      Secrets: { k: 'v' },
    });
    const reg = JSON.parse(await s.waitFor(hasType('CSIVolumeRegistered')));
    const fx = fixture('event-stream-csivolume-frame.from-code.json');
    expect(keys(reg)).toEqual(keys(fx));
    expect(keys(reg.Events[0])).toEqual(keys(fx.Events[0]));
    expect(keys(reg.Events[0].Payload.Volume)).toEqual(keys(fx.Events[0].Payload.Volume));
    expect(reg.Events[0]).toMatchObject({
      Topic: 'CSIVolume',
      Key: 'volume-id1',
      Namespace: 'default',
      FilterKeys: ['volume-id1', 'volume id1', 'aws-ebs0'],
      Index: reg.Index,
    });
    const payload = reg.Events[0].Payload.Volume;
    expect(payload).toMatchObject({
      Secrets: null,
      MountOptions: { FSType: 'ext4', MountFlags: ['[REDACTED]'] },
      Allocations: [],
      Schedulable: false,
      NodesHealthy: 0,
      CreateIndex: reg.Index,
    });

    const allocId = sim.placeAllocation({
      jobId: 'j',
      nodeId: NODE1,
      volumes: [{ volumeId: 'volume-id1', mode: 'write' }],
    });
    const claimLine = await s.waitFor(hasType('CSIVolumeClaim'));
    const claim = JSON.parse(claimLine).Events[0].Payload.Volume;
    // Claim writes store the health denormalised at claim time; Allocations stay [].
    expect(claim).toMatchObject({
      Schedulable: true,
      NodesHealthy: 2,
      AccessMode: 'single-node-writer',
      WriteAllocs: { [allocId]: null },
      Allocations: [],
    });
    expect(claimLine).toMatch(/"ModifyTime":\d{19}/);

    sim.setAllocationStatus(allocId, { clientStatus: 'complete' });
    await s.waitFor((l) => hasType('CSIVolumeClaim')(l) && l.includes('"WriteAllocs":{}'));
    await call(url, 'DELETE', '/v1/volume/csi/volume-id1', { token: MGMT });
    const dereg = JSON.parse(await s.waitFor(hasType('CSIVolumeDeregistered')));
    expect(dereg.Events[0].Payload.Volume.ID).toBe('volume-id1');
  });

  it('sends heartbeats on the configured interval', async () => {
    const s = await open('/v1/event/stream?topic=CSIVolume');
    await new Promise((r) => setTimeout(r, 260));
    expect(s.lines.filter((l) => l === '{}').length).toBeGreaterThanOrEqual(3);
  });

  it('filters by key, including FilterKeys (name, plugin id), and by topic', async () => {
    const byName = await open('/v1/event/stream?topic=CSIVolume:' + encodeURIComponent('second vol'));
    const byPlugin = await open('/v1/event/stream?topic=CSIVolume:hostpath');
    const plugins = await open('/v1/event/stream?topic=CSIPlugin');
    sim.seedVolume({ ID: 'first', PluginID: 'aws-ebs0', ExternalID: 'ext-1' });
    sim.seedVolume({ ID: 'second', Name: 'second vol', PluginID: 'hostpath' });
    sim.setPluginHealth('hostpath', { nodesHealthy: 1 });
    await byName.waitFor(hasType('CSIVolumeRegistered', 'second'));
    await byPlugin.waitFor(hasType('CSIVolumeRegistered', 'second'));
    const p = JSON.parse(
      await plugins.waitFor((l) => l.includes('"Topic":"CSIPlugin"') && l.includes('"NodesHealthy":1')),
    );
    expect(p.Events[0]).toMatchObject({
      Type: 'NodeRegistration',
      Key: 'hostpath',
      Namespace: '',
      FilterKeys: ['hostpath'],
    });
    expect(byName.frames().flatMap((f) => f.Events.map((e) => e.Key))).toEqual(['second']);
    expect(plugins.frames().every((f) => f.Events.every((e) => e.Topic === 'CSIPlugin'))).toBe(true);
  });

  it('replays the buffer from ?index (inclusive) and from the head with index=0', async () => {
    sim.seedVolume({ ID: 'one', PluginID: 'hostpath' });
    sim.seedVolume({ ID: 'two', PluginID: 'hostpath' });
    const two = JSON.parse((await call(url, 'GET', '/v1/volume/csi/two', { token: MGMT })).text);
    const from = await open(`/v1/event/stream?topic=CSIVolume&index=${two.CreateIndex}`);
    await from.waitFor(hasType('CSIVolumeRegistered', 'two'));
    expect(from.frames().map((f) => f.Events[0].Key)).toEqual(['two']);
    const all = await open('/v1/event/stream?topic=CSIVolume');
    await all.waitFor(hasType('CSIVolumeRegistered', 'two'));
    expect(all.frames().map((f) => f.Events[0].Key)).toEqual(['one', 'two']);
  });

  it('keeps a bounded buffer', async () => {
    await sim.close();
    ({ sim, url } = await startSim({ eventBufferSize: 3 }));
    for (let i = 0; i < 6; i++) sim.seedVolume({ ID: `v${i}`, PluginID: 'hostpath' });
    const s = await open('/v1/event/stream?topic=CSIVolume');
    await s.waitFor(hasType('CSIVolumeRegistered', 'v5'));
    // Like Nomad's eventBuffer, a full buffer holds `size` items plus the current head.
    expect(s.frames().map((f) => f.Events[0].Key)).toEqual(['v2', 'v3', 'v4', 'v5']);
  });

  it('requires management for all topics and namespace capabilities per topic', async () => {
    sim.addToken({ secret: 'reader', namespaces: { default: 'read' } });
    const denied = await call(url, 'GET', '/v1/event/stream', { token: 'reader' });
    expect([denied.status, denied.text, denied.headers['content-type']]).toEqual([
      403,
      'Permission denied',
      'text/plain; charset=utf-8',
    ]);
    const ok = await open('/v1/event/stream?topic=CSIVolume&topic=CSIPlugin', 'reader');
    expect(ok.status).toBe(200);
  });

  it('close() ends open streams', async () => {
    const s = await open('/v1/event/stream?topic=CSIVolume');
    await s.waitFor((l) => l === '{}');
    const t0 = Date.now();
    await sim.close();
    await s.ended;
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
