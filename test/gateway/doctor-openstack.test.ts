/**
 * The volume doctor end to end on OpenStack: a real gateway (configured from environment settings,
 * its watcher reading with an admin service user) over the OpenStack simulator, each problem kind
 * made over the simulator's control API or an admin's `os-reset_status` through the gateway, seen
 * in `volumeProblems` and `Volume.problems` with typed evidence and ordered remedies, OPENED and
 * RESOLVED on a `volumeProblemChanged` subscription over graphql-ws, ended by sending the safest
 * remedy's mutation exactly as the problem gives it with the credential its `who` names; counted in
 * `/metrics`; hidden from another project's token; and no problem from an attach and a detach the
 * gateway drives that take longer than the thresholds.
 */
import { disposeAll, OS, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { until } from '../support/until';
import {
  applyRemedy,
  eventFor,
  expectSeenOpen,
  finished,
  gone,
  problemsOf,
  safestWithMutation,
  startDoctorGateway,
  subscribeProblems,
  type DoctorGateway,
  type ProblemSubscriber,
} from './doctor-helpers';

const THRESHOLD_MS = 1000;

let os: OpenStackUnderTest;
let gw: DoctorGateway;
let seen: ProblemSubscriber;
let denied: ProblemSubscriber;
let owner: Record<string, string>;
let admin: Record<string, string>;
let outsider: Record<string, string>;

/** A control call to the simulator over HTTP (`/_sim/…`); its JSON answer. */
async function control(path: string, body: unknown = {}): Promise<any> {
  const res = await fetch(`${new URL(os.keystoneUrl).origin}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect([200, 201]).toContain(res.status);
  return res.json();
}

/** The global id of demo's volume `nativeId`, once the gateway reads it. */
async function globalId(nativeId: string): Promise<string> {
  let id: string | undefined;
  await until(async () => {
    const body = await gw.gql(
      `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
      { n: nativeId, p: os.demo },
      owner,
    );
    id = body.data?.volumeByNativeId?.id;
    return id !== undefined;
  }, `volume ${nativeId}`);
  return id!;
}

/** A server in demo and a 1 GiB volume attached to it (as a finished Nova attach leaves them); their ids. */
async function attached(name: string): Promise<{ server: string; volume: string; id: string }> {
  const server = (await control('servers', { project: os.demo, name })).id as string;
  const volume = (await control('volumes', { project: os.demo, name: `${name}-vol`, size: 1 })).id as string;
  await control('attachments', { serverId: server, volumeId: volume });
  return { server, volume, id: await globalId(volume) };
}

beforeAll(async () => {
  os = await startOpenStack();
  owner = { 'x-auth-token': os.demoToken };
  admin = { 'x-auth-token': os.adminToken };
  outsider = { 'x-auth-token': os.otherToken };
  const ms = String(THRESHOLD_MS);
  gw = await startDoctorGateway({
    GATEWAY_BACKENDS: `os=openstack@${os.keystoneUrl}`,
    GATEWAY_BACKEND_OS_REGION: 'RegionOne',
    GATEWAY_BACKEND_OS_INTERFACE: 'public',
    GATEWAY_BACKEND_OS_USERNAME: OS.adminUser,
    GATEWAY_BACKEND_OS_PASSWORD: OS.adminPassword,
    GATEWAY_BACKEND_OS_PROJECT_NAME: 'demo',
    GATEWAY_BACKEND_OS_WATCH_FAST_MS: '100',
    GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '250',
    GATEWAY_BACKEND_OS_DOCTOR_ATTACHING_MS: ms,
    GATEWAY_BACKEND_OS_DOCTOR_DETACHING_MS: ms,
    GATEWAY_BACKEND_OS_DOCTOR_DRIFT_GRACE_MS: ms,
  });
  seen = await subscribeProblems(gw.wsUrl, { 'X-Auth-Token': os.demoToken }, { backends: ['os'] });
  denied = await subscribeProblems(gw.wsUrl, { 'X-Auth-Token': os.otherToken });
}, 60_000);

afterAll(async () => {
  seen?.close();
  denied?.close();
  await gw?.stop();
  await disposeAll();
});

/** Once a problem is open: the listing, the volume's own field, the gauge, and another project's token. */
async function seenOpen(kind: string, id: string): Promise<any> {
  // Another project's token sees neither the problem nor the volume.
  const problem = await expectSeenOpen(gw, seen, { caller: owner, outsider }, 'os', kind, id);
  expect(problem).toMatchObject({ scope: os.demo, backend: { id: 'os' }, volume: { id } });
  return problem;
}

/** Sends the safest remedy with a mutation with `headers`, and waits for its operation. */
async function remedy(problem: any, action: string, headers: Record<string, string>): Promise<void> {
  const r = safestWithMutation(problem);
  expect(r.action).toBe(action);
  const out = await applyRemedy(gw, r, headers);
  expect(out.errors).toBeUndefined();
  const op = (Object.values(out.data)[0] as { operation: { id: string } }).operation;
  expect(await finished(gw, op.id, headers)).toMatchObject({ state: 'SUCCEEDED' });
}

/** After the remedy: RESOLVED, gone from the listing, the gauge at 0, and the other project never told. */
async function seenResolved(kind: string, id: string, problemId: string): Promise<void> {
  const resolved = await seen.waitFor(eventFor('RESOLVED', kind, id), `RESOLVED ${kind}`);
  expect(resolved.problem.id).toBe(problemId);
  await gone(gw, owner, kind, id);
  expect(await gw.gauge('os', kind)).toBe(0);
  expect(denied.events.filter((e) => e.type !== 'SUBSCRIBED')).toEqual([]);
  expect([seen.errors, denied.errors]).toEqual([[], []]);
}

it('should open a STUCK_TRANSITION for a detach whose compute part never answers, and end it with os-roll_detaching', async () => {
  const { server, volume, id } = await attached('stuck');
  expect(await gw.gauge('os', 'STUCK_TRANSITION')).toBe(0);
  await control('failures/stuck-detaching', { serverId: server, volumeId: volume });

  const p = await seenOpen('STUCK_TRANSITION', id);
  expect(p).toMatchObject({
    severity: 'WARNING',
    evidence: {
      __typename: 'VolumeStatusEvidence',
      status: 'DETACHING',
      backendStatus: 'detaching',
      sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
      thresholdSeconds: THRESHOLD_MS / 1000,
    },
  });
  expect(p.remedies.map((r: any) => [r.action, r.who, r.mutation !== null])).toEqual([
    ['ROLL_DETACHING', 'VOLUME_WRITER', true],
    ['DETACH_FROM_SERVER', 'VOLUME_WRITER', true],
    ['FORCE_DETACH', 'ADMIN', true],
    ['RESET_STATUS', 'ADMIN', true],
  ]);
  expect(p.remedies[3].cli).toBe(`openstack volume set --state available --detached ${volume}`);

  await remedy(p, 'ROLL_DETACHING', owner);
  await seenResolved('STUCK_TRANSITION', id, p.id);
}, 40_000);

it("should open an ERROR_STATE for a volume an admin's os-reset_status put in error, and end it with the reset it offers", async () => {
  const volume = (await control('volumes', { project: os.demo, name: 'broken', size: 1 })).id as string;
  const id = await globalId(volume);
  const reset = await gw.gql(
    `mutation($i: ResetCinderVolumeStatusInput!) { resetCinderVolumeStatus(input: $i) { operation { id state } } }`,
    { i: { volumeId: id, status: 'ERROR' } },
    admin,
  );
  expect(reset.errors).toBeUndefined();

  const p = await seenOpen('ERROR_STATE', id);
  expect(p).toMatchObject({
    severity: 'CRITICAL',
    evidence: { __typename: 'VolumeStatusEvidence', status: 'ERROR', backendStatus: 'error', thresholdSeconds: null },
  });
  expect(p.remedies.map((r: any) => [r.action, r.who, r.mutation !== null])).toEqual([
    ['RESET_STATUS', 'ADMIN', true],
    ['DELETE_VOLUME', 'VOLUME_WRITER', true],
  ]);
  // RESET_STATUS is Cinder's admin action: the volume's owner is refused it, and the problem stays.
  const refused = await applyRemedy(gw, p.remedies[0], owner);
  expect(refused.errors?.length).toBeGreaterThan(0);
  expect(await problemsOf(gw, owner, 'ERROR_STATE', id)).toHaveLength(1);

  await remedy(p, 'RESET_STATUS', admin);
  await seenResolved('ERROR_STATE', id, p.id);
}, 40_000);

it('should open an ATTACHMENT_DRIFT for a Cinder attachment of a deleted server, and end it with os-force_detach', async () => {
  const { server, volume, id } = await attached('doomed');
  await control('failures/server-deleted-keeping-attachments', { serverId: server });

  const p = await seenOpen('ATTACHMENT_DRIFT', id);
  expect(p).toMatchObject({
    severity: 'CRITICAL',
    evidence: {
      __typename: 'VolumeAttachmentDriftEvidence',
      serverId: server,
      server: 'DELETED',
      computeSide: null,
      volumeSide: { state: 'attached' },
    },
  });
  expect(p.evidence.volumeSide.attachmentId).toEqual(expect.any(String));
  expect(p.remedies.map((r: any) => [r.action, r.who, r.mutation !== null])).toEqual([
    ['DELETE_ATTACHMENT', 'VOLUME_WRITER', false],
    ['FORCE_DETACH', 'ADMIN', true],
  ]);
  expect(JSON.parse(p.remedies[1].mutation.variables)).toEqual({
    input: { volumeId: id, attachmentId: p.evidence.volumeSide.attachmentId },
  });

  await remedy(p, 'FORCE_DETACH', admin);
  await seenResolved('ATTACHMENT_DRIFT', id, p.id);
  expect(volume).toBeTruthy();
}, 40_000);

it('should find nothing in an attach and a detach the gateway drives, each slower than the thresholds', async () => {
  const server = (await control('servers', { project: os.demo, name: 'calm' })).id as string;
  const volume = (await control('volumes', { project: os.demo, name: 'calm-vol', size: 1 })).id as string;
  const id = await globalId(volume);
  const before = seen.events.length;
  await control('delays', { attachMs: 1500, attachCompleteMs: 800, detachMs: 1500 });
  const target = { volumeId: id, target: { server: { serverId: server } } };
  for (const verb of ['attachVolume', 'detachVolume'] as const) {
    const input = verb === 'attachVolume' ? 'AttachVolumeInput' : 'DetachVolumeInput';
    const out = await gw.gql(
      `mutation($i: ${input}!) { ${verb}(input: $i) { operation { id state } } }`,
      { i: target },
      owner,
    );
    expect(out.errors).toBeUndefined();
    expect(await finished(gw, out.data[verb].operation.id, owner)).toMatchObject({ state: 'SUCCEEDED' });
  }
  await new Promise((r) => setTimeout(r, 2_500)); // two more passes
  expect(await problemsOf(gw, owner)).toEqual([]);
  expect(seen.events.slice(before).filter((e) => e.problem?.volumeId === id)).toEqual([]);
  for (const kind of ['STUCK_TRANSITION', 'ERROR_STATE', 'ATTACHMENT_DRIFT'])
    expect(await gw.gauge('os', kind)).toBe(0);
}, 40_000);

it("should show another project's problem to that project's token only", async () => {
  const volume = (await control('volumes', { project: os.other, name: 'theirs', size: 1, status: 'error' }))
    .id as string;
  const opened = await denied.waitFor((e) => e.type === 'OPENED' && e.problem?.volume?.nativeId === volume, 'OPENED');
  expect(opened.problem).toMatchObject({ kind: 'ERROR_STATE', scope: os.other });
  expect((await problemsOf(gw, outsider)).map((p) => p.id)).toEqual([opened.problem.id]);
  expect(await problemsOf(gw, owner)).toEqual([]);
  expect(seen.events.filter((e) => e.problem?.volumeId === opened.problem.volumeId)).toEqual([]);
  expect(await gw.gauge('os', 'ERROR_STATE')).toBe(1);
}, 40_000);
