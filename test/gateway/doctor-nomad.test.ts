/**
 * The volume doctor end to end on Nomad: a real gateway (configured from environment settings) over
 * the Nomad simulator, each problem kind made through the simulator's control API over HTTP, seen
 * in `volumeProblems` and `Volume.problems` with typed evidence and ordered remedies, OPENED and
 * RESOLVED on a `volumeProblemChanged` subscription over graphql-ws, ended by sending the safest
 * remedy's mutation exactly as the problem gives it; counted in `/metrics`; hidden from a token that
 * may not read the namespace; and no problem from the normal release of a claim, nor from a detach
 * the gateway itself drives while Nomad's volume watcher is slow.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { ANALYTICS_READ, ANALYTICS_WRITE, disposeAll, MGMT, NODE1, NODE2, startNomad } from '../support/harness';
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

/** May read the default namespace only: not analytics, where the problems are. */
const DEFAULT_READ = 'default-read-secret';
const NS = 'analytics';
const STUCK_CLAIM_MS = 1500;
const MISSING_PLUGIN_MS = 1000;

const reader = { 'x-nomad-token': ANALYTICS_READ };
const writer = { 'x-nomad-token': ANALYTICS_WRITE };
const outsider = { 'x-nomad-token': DEFAULT_READ };

let sim: NomadSimulator;
let gw: DoctorGateway;
let seen: ProblemSubscriber;
let denied: ProblemSubscriber;

/** A control call to the simulator over HTTP (`/_sim/…`); its JSON answer. */
async function control(path: string, body: unknown = {}): Promise<any> {
  const res = await fetch(`${sim.url}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.json();
}

/** Registers `id` in analytics on aws-ebs0 (single-node-writer) over the control API; its global id. */
async function volume(id: string): Promise<string> {
  await control('volumes', {
    ID: id,
    Name: id,
    Namespace: NS,
    PluginID: 'aws-ebs0',
    ExternalID: `vol-${id}`,
    Capacity: 2 ** 30,
    RequestedCapacityMin: 2 ** 30,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
  });
  let gid: string | undefined;
  await until(async () => {
    const body = await gw.gql(
      `query($n: String!) { volumeByNativeId(backend: "east", namespace: "${NS}", nativeId: $n) { id } }`,
      { n: id },
      reader,
    );
    gid = body.data?.volumeByNativeId?.id;
    return gid !== undefined;
  }, `volume ${id}`);
  return gid!;
}

/** A running allocation of job `job-<id>` on `nodeId` writing volume `id`; its id. */
async function claim(id: string, nodeId: string): Promise<string> {
  const out = await control('allocations', {
    namespace: NS,
    jobId: `job-${id}`,
    nodeId,
    volumes: [{ volumeId: id, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
  });
  return out.id as string;
}

beforeAll(async () => {
  sim = await startNomad();
  sim.addToken({ secret: DEFAULT_READ, namespaces: { default: 'read' } });
  gw = await startDoctorGateway({
    GATEWAY_BACKENDS: `east=nomad@${sim.url}`,
    GATEWAY_BACKEND_EAST_TOKEN: MGMT,
    GATEWAY_BACKEND_EAST_DIAGNOSIS_STUCK_CLAIM_MS: String(STUCK_CLAIM_MS),
    GATEWAY_BACKEND_EAST_DIAGNOSIS_MISSING_PLUGIN_MS: String(MISSING_PLUGIN_MS),
  });
  seen = await subscribeProblems(gw.wsUrl, { 'X-Nomad-Token': ANALYTICS_READ }, { backends: ['east'] });
  denied = await subscribeProblems(gw.wsUrl, { 'X-Nomad-Token': DEFAULT_READ });
}, 60_000);

afterAll(async () => {
  seen?.close();
  denied?.close();
  await gw?.stop();
  await disposeAll();
});

/** What every kind's test checks once its problem is open: the listing, the volume's field, the gauge, the denied caller. */
async function seenOpen(kind: string, id: string): Promise<any> {
  // A token that may not read analytics sees neither the problem nor its volume's.
  const problem = await expectSeenOpen(gw, seen, { caller: reader, outsider }, 'east', kind, id);
  expect(problem.remedies.map((r: any) => typeof r.mutation?.variables)).toEqual(
    problem.remedies.map((r: any) => (r.mutation === null ? 'undefined' : 'string')),
  );
  return problem;
}

/** After the remedy: RESOLVED, gone from the listing, the gauge at 0, and the denied subscriber never told. */
async function seenResolved(kind: string, id: string, problemId: string): Promise<void> {
  const resolved = await seen.waitFor(eventFor('RESOLVED', kind, id), `RESOLVED ${kind}`);
  expect(resolved.problem.id).toBe(problemId);
  await gone(gw, reader, kind, id);
  expect(await gw.gauge('east', kind)).toBe(0);
  expect(denied.events.filter((e) => e.type !== 'SUBSCRIBED')).toEqual([]);
  expect([seen.errors, denied.errors]).toEqual([[], []]);
}

it('should open a STUCK_CLAIM for a failed allocation whose claim Nomad holds, and end it with the detach it offers', async () => {
  const id = await volume('db');
  expect(await gw.gauge('east', 'STUCK_CLAIM')).toBe(0);
  const alloc = await claim('db', NODE1);
  await control(`allocations/${alloc}/fail`, { holdClaims: true });

  const p = await seenOpen('STUCK_CLAIM', id);
  expect(p).toMatchObject({
    severity: 'CRITICAL',
    scope: NS,
    backend: { id: 'east' },
    volume: { id, nativeId: 'db' },
    evidence: {
      __typename: 'VolumeClaimEvidence',
      consumerFound: true,
      consumerStatus: 'failed',
      nodeId: NODE1,
      claim: { access: 'READ_WRITE', consumer: { __typename: 'VolumeAllocationConsumer' } },
    },
  });
  expect(p.remedies.map((r: any) => [r.action, r.who, r.mutation !== null])).toEqual([
    ['WAIT_FOR_CLAIM_GC', 'NOBODY', false],
    ['DETACH_FROM_NODE', 'VOLUME_WRITER', true],
    ['RUN_SYSTEM_GC', 'ADMIN', false],
    ['FORCE_DEREGISTER', 'VOLUME_WRITER', true],
  ]);
  const remedy = safestWithMutation(p);
  expect(remedy.cli).toBe(`nomad volume detach -namespace=${NS} db ${NODE1}`);

  const out = await applyRemedy(gw, remedy, writer);
  expect(out.errors).toBeUndefined();
  const op = out.data.detachVolume.operation;
  expect(await finished(gw, op.id, writer)).toMatchObject({ state: 'SUCCEEDED' });
  await seenResolved('STUCK_CLAIM', id, p.id);
}, 40_000);

it('should open a CLAIM_ON_MISSING_PLUGIN for a released claim on a node whose plugin stopped, and end it with the forced deregister it offers', async () => {
  const id = await volume('plug');
  const alloc = await claim('plug', NODE2);
  await control('plugins/aws-ebs0/node-health', { nodeId: NODE2, healthy: false });
  await control(`allocations/${alloc}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });

  const p = await seenOpen('CLAIM_ON_MISSING_PLUGIN', id);
  expect(p).toMatchObject({
    severity: 'CRITICAL',
    evidence: {
      __typename: 'VolumePluginEvidence',
      pluginId: 'aws-ebs0',
      nodeId: NODE2,
      nodePluginHealthy: false,
      controllerRequired: true,
      attachment: { access: 'READ_WRITE' },
    },
  });
  expect(p.remedies.map((r: any) => [r.action, r.who, r.mutation !== null])).toEqual([
    ['RESTORE_NODE_PLUGIN', 'OPERATOR', false],
    ['FORCE_DEREGISTER', 'VOLUME_WRITER', true],
  ]);
  const remedy = safestWithMutation(p);
  const out = await applyRemedy(gw, remedy, writer);
  expect(out.errors).toBeUndefined();
  const op = out.data.deregisterNomadVolume.operation;
  if (op) expect(await finished(gw, op.id, writer)).toMatchObject({ state: 'SUCCEEDED' });
  await seenResolved('CLAIM_ON_MISSING_PLUGIN', id, p.id);
  // The volume is gone, and with it its claim: no STUCK_CLAIM either.
  await gone(gw, reader, 'STUCK_CLAIM', id);
  await control('plugins/aws-ebs0/node-health', { nodeId: NODE2, healthy: true });
}, 40_000);

it('should find nothing in a claim Nomad releases as it should, nor in a detach the gateway drives past the claim threshold', async () => {
  const id = await volume('calm');
  const before = seen.events.length;
  // A workload's claim, released by Nomad's volume watcher once the allocation completes.
  const first = await claim('calm', NODE1);
  await control(`allocations/${first}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
  await until(async () => {
    const body = await gw.gql(`query($id: ID!) { volume(id: $id) { attachments { state } } }`, { id }, reader);
    return body.data.volume.attachments.length === 0;
  }, 'Nomad to release the claim');
  // A stopped workload's claim the gateway detaches, with the volume watcher slower than the
  // claim threshold: the gateway's own operation is what changes the volume meanwhile.
  const second = await claim('calm', NODE1);
  await control('volume-watcher', { paused: true });
  await control(`allocations/${second}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
  const out = await gw.gql(
    `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { operation { id state } } }`,
    { i: { volumeId: id, target: { node: { nodeId: NODE1 } } } },
    writer,
  );
  expect(out.errors).toBeUndefined();
  await new Promise((r) => setTimeout(r, STUCK_CLAIM_MS + 2_000)); // past the threshold, two passes
  // The claim is still held, past its threshold, while the gateway's detach waits on Nomad.
  const mid = await gw.gql(
    `query($id: ID!, $op: ID!) { volume(id: $id) { attachments { state } } volumeOperation(id: $op) { state } }`,
    { id, op: out.data.detachVolume.operation.id },
    reader,
  );
  expect(mid.data.volume.attachments).toHaveLength(1);
  expect(['PENDING', 'RUNNING']).toContain(mid.data.volumeOperation.state);
  await control('volume-watcher', { paused: false });
  expect(await finished(gw, out.data.detachVolume.operation.id, writer)).toMatchObject({ state: 'SUCCEEDED' });
  await new Promise((r) => setTimeout(r, 2_500)); // two more passes
  expect(await problemsOf(gw, reader)).toEqual([]);
  expect(seen.events.slice(before).filter((e) => e.problem?.volumeId === id)).toEqual([]);
  expect(await gw.gauge('east', 'STUCK_CLAIM')).toBe(0);
}, 40_000);

it('should show a problem in another namespace to a token that may read it only', async () => {
  await control('volumes', {
    ID: 'theirs',
    Name: 'theirs',
    Namespace: 'default',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-theirs',
    Capacity: 2 ** 30,
    RequestedCapacityMin: 2 ** 30,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
  });
  const { id: alloc } = await control('allocations', {
    namespace: 'default',
    jobId: 'job-theirs',
    nodeId: NODE1,
    volumes: [{ volumeId: 'theirs', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
  });
  await control(`allocations/${alloc}/fail`, { holdClaims: true });
  const opened = await denied.waitFor((e) => e.type === 'OPENED' && e.problem?.volume?.nativeId === 'theirs', 'OPENED');
  expect(opened.problem).toMatchObject({ kind: 'STUCK_CLAIM', scope: 'default' });
  expect((await problemsOf(gw, outsider)).map((p) => p.id)).toEqual([opened.problem.id]);
  expect(await problemsOf(gw, reader)).toEqual([]);
  expect(seen.events.filter((e) => e.problem?.volumeId === opened.problem.volumeId)).toEqual([]);
  expect(await gw.gauge('east', 'STUCK_CLAIM')).toBe(1);
}, 40_000);
