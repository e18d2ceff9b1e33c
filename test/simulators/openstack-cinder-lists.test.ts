/**
 * Cinder volume list parameters: sort, filters, limit/offset/marker, with_count, the summary, and
 * the volumes_links rule (a link whenever a page is full, even the last).
 */
import { call, keys, startCloud, type Cloud } from './openstack-helpers';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

describe('list parameters', () => {
  let ids: string[];
  beforeAll(() => {
    ids = ['l-1', 'l-2', 'l-3', 'l-4', 'l-5'].map((name, i) =>
      c.sim.seedVolume({
        project: 'other',
        name,
        size: i + 1,
        bootable: i === 0,
        metadata: i < 2 ? { tier: 'gold' } : {},
      }),
    );
  });

  it('should sort created_at desc by default and honour sort / sort_key', async () => {
    const names = async (q: string): Promise<string[]> =>
      (await call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other })).json.volumes.map(
        (v: { name: string }) => v.name,
      );
    expect(await names('')).toEqual(['l-5', 'l-4', 'l-3', 'l-2', 'l-1']);
    expect(await names('sort=name:asc')).toEqual(['l-1', 'l-2', 'l-3', 'l-4', 'l-5']);
    expect(await names('sort_key=size&sort_dir=asc')).toEqual(['l-1', 'l-2', 'l-3', 'l-4', 'l-5']);
    const mixed = await call(`${c.cinder.other}/volumes?sort=name&sort_key=size`, 'GET', { token: c.t.other });
    expect(mixed.json).toEqual({
      badRequest: {
        code: 400,
        message:
          "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
      },
    });
  });

  it('should emit volumes_links whenever a page is full, marker = last id, even on the last page', async () => {
    const first = await call(`${c.cinder.other}/volumes?limit=2&sort=name:asc`, 'GET', { token: c.t.other });
    expect(first.json.volumes.map((v: { id: string }) => v.id)).toEqual([ids[0], ids[1]]);
    expect(first.json.volumes_links).toEqual([
      { rel: 'next', href: `${c.urls.cinderUrl}/v3/${c.p.other}/volumes?limit=2&sort=name%3Aasc&marker=${ids[1]}` },
    ]);
    const page3 = await call(
      `${c.cinder.other}/volumes/detail?limit=1&offset=0&marker=${ids[3]}&sort=name:asc`,
      'GET',
      { token: c.t.other },
    );
    expect(page3.json.volumes).toHaveLength(1);
    expect(page3.json.volumes_links[0].href).toBe(
      `${c.urls.cinderUrl}/v3/${c.p.other}/volumes/detail?limit=1&offset=0&sort=name%3Aasc&marker=${ids[4]}`,
    );
    const after = await call(`${c.cinder.other}/volumes?limit=1&marker=${ids[4]}&sort=name:asc`, 'GET', {
      token: c.t.other,
    });
    expect(after.json).toEqual({ volumes: [] });
    const short = await call(`${c.cinder.other}/volumes?limit=10`, 'GET', { token: c.t.other });
    expect(short.json.volumes_links).toBeUndefined();
  });

  it('should count with with_count (>= 3.45) and then link every non-empty page', async () => {
    const r = await call(`${c.cinder.other}/volumes?limit=3&offset=3&with_count=true`, 'GET', {
      token: c.t.other,
      mv: 'volume 3.45',
    });
    expect(r.json.count).toBe(5);
    expect(r.json.volumes).toHaveLength(2);
    expect(keys(r.json)).toEqual(['volumes', 'volumes_links', 'count']);
    const old = await call(`${c.cinder.other}/volumes?with_count=true`, 'GET', { token: c.t.other, mv: 'volume 3.44' });
    expect(old.json).toEqual({
      badRequest: { code: 400, message: 'Invalid filters with_count are found in query options.' },
    });
  });

  it('should filter by name, bootable, size and metadata, and reject unknown filters from 3.31', async () => {
    const n = async (q: string, mv = 'volume 3.31'): Promise<number> =>
      (await call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other, mv })).json.volumes.length;
    expect(await n('name=l-3')).toBe(1);
    expect(await n('bootable=true')).toBe(1);
    expect(await n('size=2')).toBe(1);
    expect(await n(`metadata=${encodeURIComponent("{'tier': 'gold'}")}`)).toBe(2);
    const bad = await call(`${c.cinder.other}/volumes?foo=1`, 'GET', { token: c.t.other, mv: 'volume 3.31' });
    expect(bad.json).toEqual({ badRequest: { code: 400, message: 'Invalid filters foo are found in query options.' } });
    expect(await n('foo=1', 'volume 3.30')).toBe(5);
  });

  it('should validate limit, offset and marker', async () => {
    const get = (q: string): Promise<{ json: unknown; status: number }> =>
      call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other });
    expect((await get('limit=x')).json).toEqual({
      badRequest: { code: 400, message: 'limit param must be an integer' },
    });
    expect((await get('limit=-1')).json).toEqual({
      badRequest: { code: 400, message: 'limit param must be positive' },
    });
    expect((await get('marker=00000000-0000-0000-0000-000000000000')).json).toEqual({
      itemNotFound: { code: 404, message: 'Volume 00000000-0000-0000-0000-000000000000 could not be found.' },
    });
  });

  it('should summarise (>= 3.12, metadata >= 3.36) and 404 below 3.12', async () => {
    expect((await call(`${c.cinder.other}/volumes/summary`, 'GET', { token: c.t.other })).json).toEqual({
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    const s = await call(`${c.cinder.other}/volumes/summary`, 'GET', { token: c.t.other, mv: 'volume 3.36' });
    expect(s.json).toEqual({ 'volume-summary': { total_size: 15, total_count: 5, metadata: { tier: ['gold'] } } });
  });
});
