/**
 * Shared parts of the volume doctor's gateway-level tests: a real gateway configured from
 * environment settings as an operator would (backends, per-backend thresholds, `DOCTOR_*`), the
 * problem documents (evidence through inline fragments on its union), a graphql-ws subscriber to
 * `volumeProblemChanged` that keeps every event, and the remedy a problem offers, sent as it stands.
 */
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';
import { messageText } from '../../server/ws/message-text';
import { until } from '../support/until';
import { ackedClient, sample, type RawClient } from '../ws/helpers';

const ATTACHMENT = 'id state backendState access consumer { __typename }';

/**
 * Every field of a problem, its evidence typed by inline fragments (the claim evidence's
 * `attachment` is non-null, the plugin evidence's nullable: one is aliased `claim`).
 */
export const PROBLEM = `id kind severity volumeId scope startedAt seenAt summary backend { id }
  volume { id nativeId }
  evidence {
    __typename
    ... on VolumeClaimEvidence { consumerFound consumerStatus consumerDesiredStatus nodeId claim: attachment { ${ATTACHMENT} } }
    ... on VolumePluginEvidence { pluginId nodeId nodePluginHealthy controllerRequired controllersHealthy controllersExpected nodesHealthy nodesExpected attachment { ${ATTACHMENT} } }
    ... on VolumeStatusEvidence { status backendStatus updatedAt since sinceSource thresholdSeconds }
    ... on VolumeAttachmentDriftEvidence { serverId server computeSide { attachmentId state device attachedAt } volumeSide { attachmentId state device attachedAt } }
  }
  remedies { action does risk cli who mutation { document variables } }`;

export const PROBLEMS = `query($f: VolumeProblemFilter) { volumeProblems(first: 50, filter: $f) {
  nodes { ${PROBLEM} } omittedBackends { backend { id } reason }
} }`;

export const VOLUME_PROBLEMS = `query($id: ID!) { volume(id: $id) { id problems { ${PROBLEM} } } }`;

export const PROBLEM_CHANGED = `subscription($f: VolumeProblemChangeFilter) { volumeProblemChanged(filter: $f) {
  type cursor observedAt problem { ${PROBLEM} } omittedBackends { backend { id } reason }
} }`;

export interface DoctorGateway {
  gateway: RunningGateway;
  wsUrl: string;
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<any>;
  /** `GET /metrics`. */
  metrics(): Promise<string>;
  /** `gateway_volume_problems{backend,kind}` as scraped, undefined when absent. */
  gauge(backend: string, kind: string): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** A gateway configured from `env` (as `server/main.ts` reads it), with the doctor on. */
export async function startDoctorGateway(env: Record<string, string>): Promise<DoctorGateway> {
  // The suite runs with either execution engine (EXECUTION_ENGINE of the test run).
  const engine = process.env.EXECUTION_ENGINE ? { EXECUTION_ENGINE: process.env.EXECUTION_ENGINE } : {};
  const config = loadConfig({ DOCTOR: 'on', DOCTOR_INTERVAL_MS: '1000', ...engine, ...env });
  const gateway = await startGateway({
    config: {
      port: 0,
      host: '127.0.0.1',
      maxConcurrentReads: 16,
      maxBodyBytes: 1_048_576,
      shutdownGraceMs: 1_000,
      executionEngine: config.executionEngine,
      compiledDocumentsSightings: 1,
      doctor: config.doctor,
    },
    registry: createRegistry(config.backends),
    logger: createLogger('silent'),
    operationOptions: { pollMs: 50, maxPollMs: 200 },
    readinessProbe: false,
  });
  const metricsUrl = gateway.url.replace(/\/graphql$/, '/metrics');
  const metrics = async (): Promise<string> => (await fetch(metricsUrl)).text();
  return {
    gateway,
    wsUrl: gateway.url.replace(/^http/, 'ws'),
    async gql(query, variables, headers = {}) {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return res.json();
    },
    metrics,
    gauge: async (backend, kind) =>
      sample(await metrics(), `gateway_volume_problems{backend="${backend}",kind="${kind}"}`),
    stop: () => gateway.stop(),
  };
}

/** A `volumeProblemChanged` subscription over graphql-ws, every event kept. */
export interface ProblemSubscriber {
  client: RawClient;
  /** Every event received so far (`volumeProblemChanged` data), and every error payload. */
  events: any[];
  errors: unknown[];
  /** Waits for an event `match` accepts; returns it. */
  waitFor(match: (e: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  close(): void;
}

/** Connects with `payload` (the credential), subscribes with `filter` and waits for SUBSCRIBED. */
export async function subscribeProblems(
  wsUrl: string,
  payload: Record<string, unknown>,
  filter?: Record<string, unknown>,
): Promise<ProblemSubscriber> {
  const client = await ackedClient(wsUrl, payload);
  const events: any[] = [];
  const errors: unknown[] = [];
  client.ws.on('message', (d) => {
    const m = JSON.parse(messageText(d));
    if (m.id !== 'p') return;
    if (m.type === 'next' && m.payload.data) events.push(m.payload.data.volumeProblemChanged);
    if (m.type === 'error' || m.payload?.errors) errors.push(m.payload);
  });
  client.send({ id: 'p', type: 'subscribe', payload: { query: PROBLEM_CHANGED, variables: { f: filter } } });
  const waitFor = async (match: (e: any) => boolean, what: string, timeoutMs = 20_000): Promise<any> => {
    await until(
      () => events.some(match) || errors.length > 0,
      () => `${what}; events: ${JSON.stringify(events.map(brief))}`,
      timeoutMs,
    );
    expect(errors).toEqual([]);
    return events.find(match);
  };
  await waitFor((e) => e.type === 'SUBSCRIBED', 'SUBSCRIBED');
  return { client, events, errors, waitFor, close: () => client.ws.close() };
}

/** An event as type, kind and volume, for failure messages. */
const brief = (e: any): string => `${e.type} ${e.problem?.kind ?? ''} ${e.problem?.volume?.nativeId ?? ''}`;

/** An event of `type` about a problem of `kind` on the volume with global id `volumeId`. */
export const eventFor =
  (type: string, kind: string, volumeId: string) =>
  (e: any): boolean =>
    e.type === type && e.problem?.kind === kind && e.problem?.volumeId === volumeId;

/** The open problems `headers` may see, of `kind` on `volumeId` when given. */
export async function problemsOf(
  gw: DoctorGateway,
  headers: Record<string, string>,
  kind?: string,
  volumeId?: string,
): Promise<any[]> {
  const body = await gw.gql(PROBLEMS, { f: kind ? { kinds: [kind] } : undefined }, headers);
  if (body.errors) throw new Error(`volumeProblems: ${JSON.stringify(body.errors)}`);
  return (body.data.volumeProblems.nodes as any[]).filter((p) => volumeId === undefined || p.volumeId === volumeId);
}

/** Waits until `volumeProblems` lists exactly one problem of `kind` on `volumeId`; returns it. */
export async function openProblem(
  gw: DoctorGateway,
  headers: Record<string, string>,
  kind: string,
  volumeId: string,
  timeoutMs = 20_000,
): Promise<any> {
  let found: any[] = [];
  await until(
    async () => (found = await problemsOf(gw, headers, kind, volumeId)).length === 1,
    () => `one ${kind} on ${volumeId}; listed ${JSON.stringify(found)}`,
    timeoutMs,
    100,
  );
  return found[0];
}

/** The first remedy (remedies run from safest to riskiest) that has a mutation. */
export const safestWithMutation = (problem: any): any => problem.remedies.find((r: any) => r.mutation !== null);

/** Sends the remedy's mutation exactly as the problem gives it; returns the response body. */
export async function applyRemedy(gw: DoctorGateway, remedy: any, headers: Record<string, string>): Promise<any> {
  return gw.gql(remedy.mutation.document, JSON.parse(remedy.mutation.variables), headers);
}

/** Nothing of `kind` on `volumeId` for `headers` any more. */
export async function gone(
  gw: DoctorGateway,
  headers: Record<string, string>,
  kind: string,
  volumeId: string,
): Promise<void> {
  await until(
    async () => (await problemsOf(gw, headers, kind, volumeId)).length === 0,
    `${kind} to leave`,
    20_000,
    100,
  );
}

/** Polls `volumeOperation(id)` with `headers` until it is terminal; returns its state and reason. */
export async function finished(
  gw: DoctorGateway,
  id: string,
  headers: Record<string, string>,
): Promise<{ state: string; failureReason: string | null }> {
  let op: any = null;
  await until(
    async () => {
      const body = await gw.gql(
        `query($id: ID!) { volumeOperation(id: $id) { state failureReason } }`,
        { id },
        headers,
      );
      op = body.data?.volumeOperation;
      return op !== null && op !== undefined && ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'CANCELLED'].includes(op.state);
    },
    () => `operation ${id} to finish; last ${JSON.stringify(op)}`,
    20_000,
    100,
  );
  return op;
}

/**
 * What every kind's test checks once its problem is open: the listing (`caller`), OPENED on `seen`,
 * the volume's own field, the gauge at 1, and `outsider` seeing neither the problem nor the volume.
 * Answers the problem as listed.
 */
export async function expectSeenOpen(
  gw: DoctorGateway,
  seen: ProblemSubscriber,
  who: { caller: Record<string, string>; outsider: Record<string, string> },
  backend: string,
  kind: string,
  id: string,
): Promise<any> {
  const problem = await openProblem(gw, who.caller, kind, id);
  const opened = await seen.waitFor(eventFor('OPENED', kind, id), `OPENED ${kind}`);
  expect(opened.problem.id).toBe(problem.id);
  const own = (await gw.gql(VOLUME_PROBLEMS, { id }, who.caller)).data.volume.problems;
  expect(own.filter((p: any) => p.kind === kind)).toEqual([problem]);
  expect(await gw.gauge(backend, kind)).toBe(1);
  expect(await problemsOf(gw, who.outsider)).toEqual([]);
  expect((await gw.gql(VOLUME_PROBLEMS, { id }, who.outsider)).data?.volume ?? null).toBeNull();
  return problem;
}
