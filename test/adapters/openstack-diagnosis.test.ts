/**
 * The OpenStack backend's volume doctor (adapters/openstack/diagnosis/) against the real
 * simulator servers: the watcher's view plus one Nova listing per pass, each kind found with its
 * evidence and remedies at the default thresholds (the pass's clock moved past them), no false
 * alarms, problems that end when their condition does (through the adapter's own Cinder actions),
 * and what a pass costs the backend.
 */
import type { Finding } from '../../adapters/contract/diagnosis';
import { DIAGNOSIS_DEFAULTS } from '../../adapters/openstack/diagnosis';
import { sleep } from '../simulators/openstack-helpers';
import { until } from '../support/until';
import { about, fresh, mutationErrors, TestDoctor, viewOf } from './openstack-diagnosis-helpers';
import { novaAttach, novaDetach, startWatchCloud, type ServiceUser, type WatchCloud } from './openstack-watch-helpers';

const GRACE = 2 * 10_000; // 2 × the default watchSlowMs
const kinds = (fs: Finding[]): string[] => fs.map((f) => f.kind).sort();

let c: WatchCloud;
let doctor: TestDoctor;

async function start(who: ServiceUser, sim: Parameters<typeof startWatchCloud>[1] = {}): Promise<void> {
  c = await startWatchCloud(who, sim, { doctorServerPageSize: 2 });
  const r = await viewOf(c);
  const service = { credential: (await c.backend.serviceCredential())! };
  doctor = new TestDoctor(c, r, service);
}
afterEach(() => c.close());

/** A server in demo with a new 2 GiB volume attached, as a completed Nova attach leaves them. */
function attached(name: string): { server: string; volume: string } {
  const server = c.sim.seedServer({ project: 'demo', name });
  const volume = c.sim.seedVolume({ project: 'demo', name: `${name}-vol`, size: 2 });
  c.sim.attachNow(server, volume);
  return { server, volume };
}

describe('STUCK_TRANSITION', () => {
  beforeEach(() => start('admin'));

  it('should find a detach stuck past detachingMs, with its status evidence and remedies, and drop it once rolled back', async () => {
    const { server, volume } = attached('s1');
    c.sim.stuckDetach(server, volume);
    await fresh(doctor.r);
    const t0 = Date.now();
    expect(about((await doctor.pass(t0)).findings, volume)).toEqual([]); // a detach in progress
    const late = t0 + DIAGNOSIS_DEFAULTS.detachingMs + 1000;
    const [f, ...rest] = about((await doctor.pass(late)).findings, volume);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      kind: 'STUCK_TRANSITION',
      severity: 'WARNING',
      subject: 'detaching',
      volume: doctor.ref(volume),
      evidence: {
        __typename: 'VolumeStatusEvidence',
        status: 'DETACHING',
        backendStatus: 'detaching',
        sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
        thresholdMs: 220_000,
      },
    });
    // "since" is the earlier of Cinder's updated_at and the first pass that saw it.
    const ev = f!.evidence as { since: string; updatedAt: string };
    expect(Date.parse(ev.since)).toBe(Math.min(Date.parse(ev.updatedAt), t0));
    expect(f!.remedies.map((r) => [r.action, r.who])).toEqual([
      ['ROLL_DETACHING', 'VOLUME_WRITER'],
      ['DETACH_FROM_SERVER', 'VOLUME_WRITER'],
      ['FORCE_DETACH', 'ADMIN'],
      ['RESET_STATUS', 'ADMIN'],
    ]);
    expect(f!.remedies.at(-1)!.risk).toMatch(/does not detach anything on the host/);
    expect(f!.remedies.at(-1)!.cli).toBe(`openstack volume set --state available --detached ${volume}`);
    expect(f!.remedies[1]!.cli).toBe(`openstack server remove volume ${server} ${volume}`);
    for (const r of f!.remedies)
      expect({ action: r.action, errors: mutationErrors(r) }).toEqual({ action: r.action, errors: [] });

    // The safest remedy, through the adapter as the volume's owner would apply it.
    await c.backend.runVolumeAction(
      doctor.ref(volume),
      { action: 'rollDetaching' },
      { credential: { token: c.t.demo } },
    );
    await fresh(doctor.r);
    expect(about((await doctor.pass(late + 1000)).findings, volume)).toEqual([]);
  });

  it("should not call a transition stuck while the gateway's own operation drives it", async () => {
    const { server, volume } = attached('s1');
    c.sim.stuckDetach(server, volume);
    await fresh(doctor.r);
    doctor.operation(doctor.ref(volume));
    expect(about((await doctor.pass(Date.now() + 3_600_000)).findings, volume)).toEqual([]);
  });

  it('should scale the copy statuses by size and leave awaiting-transfer alone', async () => {
    const small = c.sim.seedVolume({ project: 'demo', name: 'small', size: 1, status: 'downloading' });
    const big = c.sim.seedVolume({ project: 'demo', name: 'big', size: 100, status: 'downloading' });
    const transfer = c.sim.seedVolume({ project: 'demo', name: 'gift', status: 'awaiting-transfer' });
    await fresh(doctor.r);
    const t0 = Date.now();
    await doctor.pass(t0);
    // 300 s + 30 s per GiB: 330 s for 1 GiB, 3300 s for 100 GiB.
    const at = async (s: number) => (await doctor.pass(t0 + s * 1000)).findings;
    const mid = await at(400);
    expect(about(mid, small).map((f) => f.evidence)).toMatchObject([{ thresholdMs: 330_000 }]);
    expect(about(mid, big)).toEqual([]);
    const late = await at(86_400);
    expect(about(late, big).map((f) => f.evidence)).toMatchObject([{ thresholdMs: 3_300_000 }]);
    expect(about(late, transfer)).toEqual([]);
  });

  it("should leave reserved alone for a shelved-offloaded server's volume, and judge it otherwise", async () => {
    const { server, volume } = attached('shelved');
    await fetch(`${new URL(c.urls.keystoneUrl).origin}/_sim/servers/${server}/shelve-offload`, { method: 'POST' });
    const lone = c.sim.seedVolume({ project: 'demo', name: 'lone', status: 'reserved' });
    await fresh(doctor.r);
    expect(doctor.r.w.volume(doctor.ref(volume))?.backendStatus).toBe('reserved');
    const t0 = Date.now();
    await doctor.pass(t0);
    // Without Nova's listing there is no telling the two apart: neither is judged.
    expect(about((await doctor.pass(t0 + 86_400_000, null)).findings, lone)).toEqual([]);
    const { findings } = await doctor.pass(t0 + DIAGNOSIS_DEFAULTS.attachingMs + 1000);
    expect(about(findings, volume)).toEqual([]); // not stuck, and no drift: Nova's BDM, Cinder's reserved attachment
    expect(about(findings, lone).map((f) => [f.kind, f.subject])).toEqual([['STUCK_TRANSITION', 'reserved']]);
    expect(about(findings, lone)[0]!.remedies.map((r) => r.action)).toEqual([
      'DELETE_RESERVED_ATTACHMENT',
      'RESET_STATUS',
    ]);
  });
});

describe('ERROR_STATE', () => {
  beforeEach(() => start('admin'));

  it('should find error statuses as CRITICAL with state-dependent remedies, and drop one reset by an admin', async () => {
    const extending = c.sim.seedVolume({ project: 'demo', name: 'x', status: 'error_extending' });
    const failed = c.sim.seedVolume({ project: 'demo', name: 'y', status: 'error' });
    await fresh(doctor.r);
    const { findings } = await doctor.pass();
    const [f] = about(findings, extending);
    expect(f).toMatchObject({
      kind: 'ERROR_STATE',
      severity: 'CRITICAL',
      subject: 'error_extending',
      evidence: { backendStatus: 'error_extending', status: 'ERROR', thresholdMs: null },
    });
    expect(f!.remedies.map((r) => [r.action, r.who, r.mutation?.variables])).toEqual([
      ['RESET_STATUS', 'ADMIN', { input: { volumeId: expect.any(String), status: 'AVAILABLE' } }],
    ]);
    expect(about(findings, failed)[0]!.remedies.map((r) => r.action)).toEqual(['RESET_STATUS', 'DELETE_VOLUME']);
    for (const r of [...f!.remedies, ...about(findings, failed)[0]!.remedies]) expect(mutationErrors(r)).toEqual([]);

    await c.backend.runVolumeAction(
      doctor.ref(extending),
      { action: 'resetStatus', status: 'AVAILABLE' },
      {
        credential: { token: c.t.admin },
      },
    );
    await fresh(doctor.r);
    expect(about((await doctor.pass()).findings, extending)).toEqual([]);
  });
});

describe('ATTACHMENT_DRIFT', () => {
  it('should find a dangling block device mapping past its grace, Nova and Cinder side by side', async () => {
    await start('admin');
    const { server, volume } = attached('s1');
    doctor.r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [server] }); // Nova's side in the view
    c.sim.danglingBdm(server, volume);
    await until(() => (c.sim.volume(volume) as { status: string }).status === 'available', 'Cinder to let go');
    await fresh(doctor.r);
    const t0 = Date.now();
    expect(about((await doctor.pass(t0)).findings, volume)).toEqual([]); // inside the grace period
    const [f, ...rest] = about((await doctor.pass(t0 + GRACE + 1000)).findings, volume);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      kind: 'ATTACHMENT_DRIFT',
      severity: 'CRITICAL',
      subject: server,
      evidence: { serverId: server, server: 'LISTED', volumeSide: null, computeSide: { device: '/dev/sdb' } },
    });
    // Cinder shows it available: Nova's detach would be refused, so it is not offered.
    expect(f!.remedies.map((r) => r.action)).toEqual(['REBOOT_SERVER']);
    for (const r of f!.remedies) expect(mutationErrors(r)).toEqual([]);
  });

  it('should find a Cinder attachment to a deleted server (DELETED for an admin), and drop it once force-detached', async () => {
    await start('admin');
    const { server, volume } = attached('s1');
    c.sim.deleteServerKeepingAttachments(server);
    await fresh(doctor.r);
    const t0 = Date.now();
    await doctor.pass(t0);
    const [f] = about((await doctor.pass(t0 + GRACE + 1000)).findings, volume);
    const attachmentId = (c.sim.volume(volume) as { attachments: Array<{ id: string }> }).attachments[0]!.id;
    expect(f).toMatchObject({
      kind: 'ATTACHMENT_DRIFT',
      severity: 'CRITICAL',
      evidence: { server: 'DELETED', computeSide: null, volumeSide: { attachmentId, state: 'attached' } },
    });
    expect(f!.remedies.map((r) => [r.action, r.who])).toEqual([
      ['DELETE_ATTACHMENT', 'VOLUME_WRITER'],
      ['FORCE_DETACH', 'ADMIN'],
    ]);
    expect(f!.remedies[1]!.mutation!.variables).toMatchObject({ input: { attachmentId } });

    await c.backend.runVolumeAction(
      doctor.ref(volume),
      { action: 'forceDetach', attachmentId },
      {
        credential: { token: c.t.admin },
      },
    );
    await fresh(doctor.r);
    expect(about((await doctor.pass(t0 + GRACE + 2000)).findings, volume)).toEqual([]);
  });

  it('should say NOT_VISIBLE (a WARNING) when a member service user cannot tell deleted from another project', async () => {
    await start('member');
    const { server, volume } = attached('s1');
    c.sim.deleteServerKeepingAttachments(server);
    await fresh(doctor.r);
    const t0 = Date.now();
    expect((await doctor.pass(t0)).facts!.allProjects).toBe(false);
    const [f] = about((await doctor.pass(t0 + GRACE + 1000)).findings, volume);
    expect(f).toMatchObject({ severity: 'WARNING', evidence: { serverId: server, server: 'NOT_VISIBLE' } });
  });

  it('should report a mapping to a volume Cinder no longer has (checkFacts)', async () => {
    await start('admin');
    const { server, volume } = attached('s1');
    c.sim.danglingBdm(server, volume);
    await until(() => (c.sim.volume(volume) as { status: string }).status === 'available', 'Cinder to let go');
    c.sim.seedVolume({ project: 'demo', name: 'other' }); // the view is not empty
    const del = await fetch(`${c.urls.cinderUrl}/v3/${c.p.demo}/volumes/${volume}`, {
      method: 'DELETE',
      headers: { 'x-auth-token': c.t.demo },
    });
    expect(del.status).toBe(202);
    await until(() => c.sim.volume(volume) === undefined, 'the volume to be deleted');
    await fresh(doctor.r);
    const t0 = Date.now();
    await doctor.pass(t0);
    const [f] = about((await doctor.pass(t0 + GRACE + 1000)).findings, volume);
    expect(f).toMatchObject({
      kind: 'ATTACHMENT_DRIFT',
      volume: doctor.ref(volume),
      evidence: { server: 'LISTED', volumeSide: null, computeSide: { attachmentId: null } },
    });
    expect(f!.remedies.map((r) => r.action)).toEqual(['REBOOT_SERVER']);
  });
});

describe('no false alarms', () => {
  beforeEach(() => start('admin', { delays: { attachMs: 3000, detachMs: 3000 } }));

  it('should report nothing for a normal attach and detach in progress, past the drift grace', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's1' });
    const attaching = c.sim.seedVolume({ project: 'demo', name: 'a' });
    await novaAttach(c, server, attaching);
    const { server: s2, volume: detaching } = attached('s2');
    await novaDetach(c, s2, detaching);
    await fresh(doctor.r);
    expect(doctor.r.w.volume(doctor.ref(attaching))?.backendStatus).toMatch(/^(reserved|attaching)$/);
    expect(doctor.r.w.volume(doctor.ref(detaching))?.backendStatus).toBe('detaching');
    const t0 = Date.now();
    await doctor.pass(t0);
    const { findings } = await doctor.pass(t0 + GRACE + 1000);
    expect([...about(findings, attaching), ...about(findings, detaching)]).toEqual([]);
  });

  it('should keep quiet about healthy volumes whatever the clock says', async () => {
    attached('s1');
    c.sim.seedVolume({ project: 'demo', name: 'free' });
    await fresh(doctor.r);
    const t0 = Date.now();
    await doctor.pass(t0);
    expect(kinds((await doctor.pass(t0 + 86_400_000)).findings)).toEqual([]);
  });
});

describe('cost', () => {
  beforeEach(() => start('admin'));

  it('should read one Nova listing per pass (its pages, across projects) and nothing per volume', async () => {
    for (let i = 0; i < 5; i++) attached(`s${i}`);
    c.sim.seedServer({ project: 'other', name: 'theirs' });
    await fresh(doctor.r);
    // The watcher idle (nobody listens), so the log holds the doctor's calls only.
    doctor.r.w.setDemand({ subscribers: 0, pendingVolumes: [], pendingServers: [] });
    await sleep(150);
    // The first pass also reads Nova's version document once (the microversion, cached); a pass after it:
    await c.backend.diagnosis.readFacts!(doctor.service);
    const before = c.sim.requests().length;
    const facts = await c.backend.diagnosis.readFacts!(doctor.service);
    const made = c.sim
      .requests()
      .slice(before)
      .filter((e) => e.service !== 'keystone');
    // 6 servers at 2 a page: 3 full pages, and a 4th that is empty, because Nova links a next page
    // after every full one; each `GET /servers/detail?all_tenants=1&limit=2[&marker=…]`.
    expect(facts.pages).toBe(4);
    expect(facts.servers.size).toBe(6);
    expect(made.map((e) => `${e.method} ${e.path.replace(/^.*\/v2\.1/, '')}`)).toEqual(
      Array(4).fill('GET /servers/detail'),
    );
    expect(made.map((e) => [e.params.all_tenants?.[0], e.params.limit?.[0], e.params.marker !== undefined])).toEqual([
      ['1', '2', false],
      ['1', '2', true],
      ['1', '2', true],
      ['1', '2', true],
    ]);
    // The checks are pure: a pass over the view with these facts calls nothing.
    const quiet = c.sim.requests().length;
    await doctor.pass(Date.now(), facts);
    expect(c.sim.requests().length).toBe(quiet);
  });
});
