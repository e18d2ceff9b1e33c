/**
 * Demo activity (issue 11 item 10): the demo backends change by themselves. Started as `npm start`
 * starts them, with a short interval; what happened is read back from the simulators over their
 * own HTTP APIs (Nomad's volume read, Keystone's catalog and Cinder's volume read), as any client
 * would see it.
 */
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import { demoActivityFromEnv } from '../../server/demo-activity';

const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('demo activity', () => {
  let demo: DemoBackends;
  const steps: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    demo = await startDemoBackends({
      activity: {
        intervalMs: 400,
        onStep: (name, outcome) => steps.push(`${name}: ${outcome}`),
        onError: (name, err) => errors.push(`${name}: ${String(err)}`),
      },
    });
  });
  afterAll(async () => {
    await demo?.stop();
  });

  it('should claim and release a Nomad volume, seen in Nomad volume reads', async () => {
    const east = demo.backends.find((b) => b.id === 'nomad-east')!;
    const read = async (): Promise<{ writers: string[]; allocations: Array<{ ID: string; ClientStatus: string }> }> => {
      const res = await fetch(`${east.url}/v1/volume/csi/build-cache?namespace=default`, {
        headers: { 'X-Nomad-Token': demo.kinds.nomad.tokens['nomad-east']!.management },
      });
      expect(res.status).toBe(200);
      const v = (await res.json()) as {
        WriteAllocs: Record<string, unknown>;
        Allocations: Array<{ ID: string; ClientStatus: string }> | null;
      };
      return { writers: Object.keys(v.WriteAllocs ?? {}), allocations: v.Allocations ?? [] };
    };
    const claimed = await until('a claim', async () => {
      const v = await read();
      return v.writers.length === 1 ? v : undefined;
    });
    expect(claimed.allocations).toEqual([expect.objectContaining({ ID: claimed.writers[0], ClientStatus: 'running' })]);
    await until('its release', async () => ((await read()).writers.length === 0 ? true : undefined));
    expect(steps).toContain('nomad-east claim/release: claimed');
    expect(steps).toContain('nomad-east claim/release: released');
  }, 30_000);

  it('should attach and detach an OpenStack volume through Nova, seen in Cinder volume reads', async () => {
    const headers = { 'X-Auth-Token': demo.kinds.openstack.token, accept: 'application/json' };
    const catalog = (await (await fetch(`${demo.kinds.openstack.keystoneUrl}/auth/catalog`, { headers })).json()) as {
      catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }>;
    };
    const cinder = catalog.catalog
      .find((s) => s.type === 'volumev3')!
      .endpoints.find((e) => e.interface === 'public')!.url;
    const read = async (): Promise<{ status: string; servers: string[] }> => {
      const res = await fetch(`${cinder}/volumes/d0000000-0000-4000-8000-000000000011`, { headers });
      expect(res.status).toBe(200);
      const { volume } = (await res.json()) as {
        volume: { status: string; attachments: Array<{ server_id: string }> };
      };
      return { status: volume.status, servers: volume.attachments.map((a) => a.server_id) };
    };
    const seen: string[] = [];
    const note = (s: string): void => void (seen.at(-1) === s ? undefined : seen.push(s));
    const attached = await until('an attach', async () => {
      const v = await read();
      note(v.status);
      return v.status === 'in-use' ? v : undefined;
    });
    expect(attached.servers).toEqual(['a0000000-0000-4000-8000-000000000005']);
    await until('its detach', async () => {
      const v = await read();
      note(v.status);
      return v.status === 'available' ? v : undefined;
    });
    // Statuses seen on the way (the transitional ones may fall between two reads).
    expect(seen.filter((s) => s === 'in-use' || s === 'available').slice(-2)).toEqual(['in-use', 'available']);
    expect(steps).toContain('openstack attach/detach: attach');
    expect(steps).toContain('openstack attach/detach: detach');
  }, 30_000);

  it('should have run without failures, and stop', async () => {
    expect(errors).toEqual([]);
    const activity = demo.activity!;
    await activity.stop();
    const count = activity.steps;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(activity.steps).toBe(count);
  });

  it('should be off with DEMO_ACTIVITY=0 and refuse bad settings', () => {
    expect(demoActivityFromEnv({ DEMO_ACTIVITY: '0' })).toBe(false);
    expect(demoActivityFromEnv({})).toEqual({});
    expect(demoActivityFromEnv({ DEMO_ACTIVITY_INTERVAL_MS: '2000' })).toEqual({ intervalMs: 2000 });
    expect(() => demoActivityFromEnv({ DEMO_ACTIVITY: 'yes' })).toThrow('DEMO_ACTIVITY: must be 0 (off) or 1 (on)');
    expect(() => demoActivityFromEnv({ DEMO_ACTIVITY_INTERVAL_MS: '10' })).toThrow('DEMO_ACTIVITY_INTERVAL_MS');
  });

  it('should start no activity when told not to', async () => {
    const quiet = await startDemoBackends({ activity: false });
    try {
      expect(quiet.activity).toBeUndefined();
      const east = quiet.backends.find((b) => b.id === 'nomad-east')!;
      expect((await fetch(`${east.url}/v1/volume/csi/build-cache?namespace=default`)).status).toBe(404);
    } finally {
      await quiet.stop();
    }
  });
});
