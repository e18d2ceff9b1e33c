/**
 * Who may see the OpenStack watcher's changes, against the real simulator: the subscriber's own
 * Keystone token decides (own project, or every project for an admin), invalid or expired tokens
 * end the subscription, and what only admins see is removed for the others.
 */
import { UnauthenticatedError } from '../../adapters/contract/errors';
import type { VolumeRef } from '../../adapters/contract/model';
import { call } from '../simulators/openstack-helpers';
import { startWatchCloud, watch, type WatchCloud } from './openstack-watch-helpers';
import { until } from '../support/until';

const WITHIN = 15_000;
const anyRef = (c: WatchCloud): VolumeRef => ({
  backend: 'os',
  namespace: c.p.demo,
  nativeId: '00000000-0000-4000-8000-000000000001',
});

describe('OpenStack subscriber access', () => {
  let c: WatchCloud;
  beforeEach(async () => {
    c = await startWatchCloud('admin');
  });
  afterEach(() => c.close());

  it('should allow a member its own project only, and an admin every project with admin fields', async () => {
    const as = (token: string) => ({ credential: { token } });
    const own = await c.backend.checkAccess(c.p.demo, anyRef(c), as(c.t.demo));
    expect(own).toEqual({ allowed: true, admin: false, validUntil: expect.any(Number) });
    expect(own.validUntil!).toBeGreaterThan(Date.now());
    expect(await c.backend.checkAccess(c.p.other, anyRef(c), as(c.t.demo))).toMatchObject({
      allowed: false,
      admin: false,
    });
    expect(await c.backend.checkAccess(c.p.demo, anyRef(c), as(c.t.reader))).toMatchObject({
      allowed: true,
      admin: false,
    });
    expect(await c.backend.checkAccess(c.p.other, anyRef(c), as(c.t.admin))).toMatchObject({
      allowed: true,
      admin: true,
    });
    // Each check validates its token afresh (the hub caches the grant, 30 s): a revoked token is refused at the next check.
    const validations = (): number =>
      c.sim.requests().filter((e) => e.service === 'keystone' && e.method === 'GET').length;
    expect(validations()).toBe(4);
    c.sim.expireToken(c.t.demo);
    await expect(c.backend.checkAccess(c.p.demo, anyRef(c), as(c.t.demo))).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(validations()).toBe(5);
  });

  it('should throw UnauthenticatedError for an expired, invalid or missing token', async () => {
    const expiring = c.sim.issueToken({ user: 'demo', project: 'demo' });
    c.sim.expireToken(expiring);
    await expect(
      c.backend.checkAccess(c.p.demo, anyRef(c), { credential: { token: expiring } }),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(
      c.backend.checkAccess(c.p.demo, anyRef(c), { credential: { token: 'gAAAAAnot-a-token' } }),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(c.backend.checkAccess(c.p.demo, anyRef(c), { credential: {} })).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      backend: 'os',
    });
  });

  it('should give the gateway its service token, and none without a service credential', async () => {
    const cred = await c.backend.serviceCredential();
    expect(cred?.token).toEqual(expect.any(String));
    expect((await call(`${c.cinder.admin}/volumes`, 'GET', { token: cred!.token })).status).toBe(200);
    const bare = await startWatchCloud(null);
    try {
      await expect(bare.backend.serviceCredential()).resolves.toBeNull();
    } finally {
      await bare.close();
    }
  });

  it("should remove admin-only fields for non-admins: the result is what the member's own read shows", async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'moving' });
    const adminInDemo = c.sim.issueToken({ user: 'admin', project: 'demo' });
    const reset = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: adminInDemo,
      body: { 'os-reset_status': { migration_status: 'migrating' } },
    });
    expect(reset.status).toBe(202);
    // A host attachment (attachments API), whose host name only admins see.
    const hostVol = c.sim.seedVolume({ project: 'demo', name: 'on-host' });
    const mv = 'volume 3.44';
    const att = await call(`${c.cinder.demo}/attachments`, 'POST', {
      token: c.t.demo,
      mv,
      body: {
        attachment: { volume_uuid: hostVol, connector: { host: 'node-7', initiator: 'iqn.1993-08.org.debian:01:abc' } },
      },
    });
    expect(att.status).toBe(200);
    expect(
      (
        await call(`${c.cinder.demo}/attachments/${att.json.attachment.id}/action`, 'POST', {
          token: c.t.demo,
          mv,
          body: { 'os-complete': {} },
        })
      ).status,
    ).toBe(204);

    const r = watch(c);
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    const ref = { backend: 'os', namespace: c.p.demo, nativeId: id };
    const hostRef = { backend: 'os', namespace: c.p.demo, nativeId: hostVol };
    const seen = r.w.volume(ref)!;
    const seenHost = r.w.volume(hostRef)!;
    expect(seen.details).toMatchObject({ __typename: 'CinderVolumeDetails', migrationStatus: 'migrating' });
    expect(seenHost.attachments[0]!.consumer).toEqual({
      __typename: 'VolumeHostConsumer',
      hostName: expect.any(String),
    });
    const copy = JSON.stringify([seen, seenHost]);

    const member = { allowed: true, admin: false };
    const redacted = c.backend.redact(seen, member);
    const redactedHost = c.backend.redact(seenHost, member);
    expect(redacted.details).toMatchObject({ migrationStatus: null });
    expect(redactedHost.attachments[0]!.consumer).toEqual({ __typename: 'VolumeHostConsumer', hostName: null });
    // Exactly what the member reads with its own token.
    const own = await c.backend.getVolumes([ref, hostRef], { credential: { token: c.t.demo } }, 2);
    expect([redacted, redactedHost]).toEqual(own);
    // The watcher's shared view is untouched; an admin's grant sees it whole.
    expect(JSON.stringify([seen, seenHost])).toBe(copy);
    expect(c.backend.redact(seen, { allowed: true, admin: true })).toBe(seen);
  });
});
