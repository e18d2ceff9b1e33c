/** The access cache against a real Nomad backend and simulator: single-flight per key, never shared across credentials, TTL. */
import { AccessCache } from '../../subscriptions/live/access';
import { ANALYTICS_READ, MGMT, seedVolume, startNomadBackend, type NomadUnderTest } from '../adapters/nomad-helpers';

let n: NomadUnderTest;
beforeEach(async () => {
  n = await startNomadBackend();
  seedVolume(n.sim, 'v1', 'default');
});
afterEach(() => n.stop());

const reads = (): number => n.calls().filter((c) => c.startsWith('GET /v1/volume/csi/')).length;

it('checks once per (credential, backend, scope) however many ask at once, and not across credentials', async () => {
  let now = 0;
  const cache = new AccessCache({ ttlMs: 1000, now: () => now });
  const ref = n.ref('v1');
  const asked = await Promise.all([1, 2, 3].map(async () => cache.get(n.backend, 'default', ref, { token: MGMT })));
  expect(asked.every((g) => 'allowed' in g && g.allowed)).toBe(true);
  expect(reads()).toBe(1);
  // Cached: synchronous, no call.
  expect(cache.get(n.backend, 'default', ref, { token: MGMT })).toMatchObject({ allowed: true });
  expect(reads()).toBe(1);
  // Another credential is checked on its own (and may not read namespace default).
  expect(await cache.get(n.backend, 'default', ref, { token: ANALYTICS_READ })).toMatchObject({ allowed: false });
  expect(reads()).toBe(2);
  // After the TTL the grant is checked again.
  now = 1001;
  await cache.get(n.backend, 'default', ref, { token: MGMT });
  expect(reads()).toBe(3);
});

it("keeps a credential object's hash, but hashes again when its token changed (no answer for another token)", async () => {
  const cache = new AccessCache({ ttlMs: 60_000 });
  const ref = n.ref('v1');
  const cred: { token?: string } = { token: MGMT };
  expect((await cache.get(n.backend, 'default', ref, cred)) as { allowed: boolean }).toMatchObject({ allowed: true });
  expect(await cache.get(n.backend, 'default', ref, cred)).toMatchObject({ allowed: true });
  expect(reads()).toBe(1);
  cred.token = 'not-a-token';
  const answer = await cache.get(n.backend, 'default', ref, cred);
  expect(answer).toBeInstanceOf(Error);
  expect(reads()).toBe(2);
});
