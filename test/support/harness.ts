/**
 * Test harness: real simulators and a real gateway on free loopback ports, talked to over HTTP.
 * Everything started is registered in `leftovers` and stopped by `disposeAll()`.
 */
import type { DoctorConfig } from '../../server/doctor-config';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry, type ResilienceOptions } from '../../server/backends';
import { BREAKER_DEFAULTS, BreakerBoard } from '../../adapters/contract/breaker';
import { NomadBackend } from '../../adapters/nomad/backend';
import type { NomadWatchTuning } from '../../adapters/nomad/watch';
import { BackendRegistry } from '../../domain/registry';
import type { ReadinessConfig } from '../../server/readiness';
import type { RedisConfig } from '../../server/redis-config';
import type { NomadSettings as NomadBackendConfig } from '../../adapters/nomad/settings';
import type { OpenStackSettings as OpenStackBackendConfig } from '../../adapters/openstack/settings';
import type { HttpEdgeOptions } from '../../server/http/config';
import type { LimitsConfig } from '../../server/limits';
import type { OperationTrackerOptions } from '../../subscriptions/operations';
import { createLogger } from '../../server/logger';
import { EXECUTION_ENGINES, type ExecutionEngine } from '../../server/execution/compiled';
import { NomadSimulator, type NomadSimulatorOptions } from '../../simulators/nomad';
import { OpenStackSimulator, type OpenStackSimulatorOptions } from '../../simulators/openstack';
import { isTerminal, settle } from './until';

/** `EXECUTION_ENGINE` from the test run's environment (the whole suite runs with either), else the default. */
function engineFromEnv(): ExecutionEngine | undefined {
  const e = process.env.EXECUTION_ENGINE;
  if (e === undefined || e === '') return undefined;
  if (!(EXECUTION_ENGINES as readonly string[]).includes(e))
    throw new Error(`EXECUTION_ENGINE must be one of ${EXECUTION_ENGINES.join(', ')}`);
  return e as ExecutionEngine;
}
import { ANALYTICS_READ, ANALYTICS_WRITE, MGMT, NOMAD_NODES, NOMAD_PLUGINS, OS } from './constants';

const leftovers: Array<() => Promise<void>> = [];

export async function disposeAll(): Promise<void> {
  while (leftovers.length > 0) await leftovers.pop()!();
}

export { ANALYTICS_READ, ANALYTICS_WRITE, FAST, MGMT, NODE1, NODE2, OS } from './constants';

/**
 * The standard Nomad simulator, not yet listening: ACLs on unless `options` say otherwise,
 * namespaces default and analytics, tokens MGMT / ANALYTICS_READ / ANALYTICS_WRITE, nodes NODE1
 * and NODE2, plugins aws-ebs0 (controller) and hostpath (node only); no volumes.
 */
export function nomadSimulator(options: NomadSimulatorOptions = {}): NomadSimulator {
  const sim = new NomadSimulator({ acl: { enabled: true }, ...options });
  sim.addNamespace('analytics');
  sim.addToken({ secret: MGMT, management: true });
  sim.addToken({ secret: ANALYTICS_READ, namespaces: { analytics: 'read' } });
  sim.addToken({ secret: ANALYTICS_WRITE, namespaces: { analytics: 'write' } });
  for (const n of NOMAD_NODES) sim.addNode(n);
  for (const p of NOMAD_PLUGINS) sim.addPlugin(p);
  return sim;
}

/** {@link nomadSimulator}, listening on a free loopback port; stopped by `disposeAll()`. */
export async function startNomad(options: NomadSimulatorOptions = {}): Promise<NomadSimulator> {
  const sim = nomadSimulator(options);
  await sim.listen(0, '127.0.0.1');
  leftovers.push(() => sim.close());
  return sim;
}

/** Seeds `n` volumes `vol-000`… in `namespace` on plugin aws-ebs0. */
export function seedVolumes(sim: NomadSimulator, n: number, namespace = 'default', prefix = 'vol'): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${String(i).padStart(3, '0')}`;
    sim.seedVolume({
      ID: id,
      Name: `${prefix} ${i}`,
      Namespace: namespace,
      PluginID: 'aws-ebs0',
      ExternalID: `ext-${namespace}-${id}`,
      Capacity: 10737418240,
      RequestedCapacityMin: 10737418240,
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
      MountOptions: { FSType: 'ext4', MountFlags: ['noatime'] },
      Secrets: { password: 'hunter2-secret' },
    });
    ids.push(id);
  }
  return ids;
}

export interface GatewayUnderTest {
  gateway: RunningGateway;
  /** POST a GraphQL operation; returns the parsed body and status. */
  gql(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
}

export async function startGatewayFor(
  backends: Array<({ id: string; url: string } & Partial<NomadBackendConfig>) | OpenStackBackendConfig>,
  options: {
    maxConcurrentReads?: number;
    operationOptions?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'>;
    redis?: RedisConfig;
    http?: HttpEdgeOptions;
    limits?: Partial<LimitsConfig>;
    /** Breakers and merged lists' per-backend deadline. @default the gateway's defaults */
    resilience?: ResilienceOptions;
    /**
     * What /readyz requires and how often it probes. Without it the background probe does not run
     * (its calls would show in simulators' request logs that tests count). @default no probe
     */
    readiness?: Partial<ReadinessConfig>;
    /** @default `EXECUTION_ENGINE` of the test run, else the gateway's default */
    executionEngine?: ExecutionEngine;
    /** The Nomad watchers' tuning (short allowances in fault tests; Nomad backends only). @default the watcher's defaults */
    nomadWatch?: NomadWatchTuning;
    /**
     * With compiled execution, the sighting that compiles a document. @default 1, not the
     * gateway's 2: most tests send a document once, and it must run compiled as every later
     * sighting does (test/gateway/compiled-documents.test.ts covers the default)
     */
    compiledDocumentsSightings?: number;
    /** With compiled execution, the budget of compiled documents. @default the gateway's (64 MiB) */
    compiledDocumentsMaxBytes?: number;
    /**
     * The volume doctor. Off unless asked: its passes read with the service credential and keep a
     * polling watcher polling, which would show in the simulators' request logs that tests count
     * (test/gateway/doctor-*.test.ts turn it on). @default off
     */
    doctor?: Partial<DoctorConfig>;
  } = {},
): Promise<GatewayUnderTest> {
  const entries = backends.map((b) =>
    b.kind === 'openstack' ? b : { kind: 'nomad' as const, timeoutMs: 5_000, maxConnections: 16, readRetries: 2, ...b },
  );
  const registry = options.nomadWatch
    ? nomadRegistry(entries, options.nomadWatch, options.resilience)
    : createRegistry(entries, undefined, options.resilience);
  const gateway = await startGateway({
    config: {
      port: 0,
      host: '127.0.0.1',
      executionEngine: options.executionEngine ?? engineFromEnv(),
      compiledDocumentsSightings: options.compiledDocumentsSightings ?? 1,
      compiledDocumentsMaxBytes: options.compiledDocumentsMaxBytes,
      maxConcurrentReads: options.maxConcurrentReads ?? 16,
      maxBodyBytes: 1_048_576,
      redis: options.redis,
      http: options.http,
      limits: options.limits,
      readiness: options.readiness,
      doctor: options.doctor ?? { enabled: 'off' },
    },
    registry,
    logger: createLogger('silent'),
    operationOptions: options.operationOptions,
    readinessProbe: options.readiness !== undefined,
  });
  leftovers.push(() => gateway.stop());
  return {
    gateway,
    async gql(query, variables, headers = {}) {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
}

/** What `createRegistry` builds for Nomad backends, with the watchers' tuning (which no setting carries). */
function nomadRegistry(
  entries: ReadonlyArray<({ id: string; url: string } & Partial<NomadBackendConfig>) | OpenStackBackendConfig>,
  watch: NomadWatchTuning,
  resilience: ResilienceOptions = {},
): BackendRegistry {
  const breakers = new BreakerBoard(resilience.breaker ?? BREAKER_DEFAULTS);
  const backends = entries.map((e) => {
    if (e.kind === 'openstack') throw new Error('nomadWatch: Nomad backends only');
    return new NomadBackend({
      backend: e.id,
      baseUrl: e.url,
      token: e.token,
      timeoutMs: e.timeoutMs,
      maxConnections: e.maxConnections,
      readRetries: e.readRetries,
      breakers,
      watch,
    });
  });
  return new BackendRegistry(backends, { breakers, listBackendDeadlineMs: resilience.listBackendDeadlineMs });
}

/** A loopback port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as import('node:net').AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/** Requests the simulator saw, as `METHOD path` lines (query excluded). */
export const calls = (sim: NomadSimulator): string[] => sim.requests().map((r) => `${r.method} ${r.path}`);

export interface OpenStackUnderTest {
  sim: OpenStackSimulator;
  keystoneUrl: string;
  /** Project ids. */
  demo: string;
  other: string;
  /** Valid Keystone tokens (issued by the simulator). */
  demoToken: string;
  otherToken: string;
  adminToken: string;
  /** Backend config for the gateway (no service credential unless asked). */
  backend(id?: string, extra?: Partial<OpenStackBackendConfig>): OpenStackBackendConfig;
}

/**
 * The standard OpenStack simulator, not yet listening: projects demo, other and admin; users demo
 * (member of demo, its default project), other (member of other), admin (id `admin`, admin of admin
 * and demo) and viewer (reader of demo). Keystone implies reader from member and member from admin.
 */
export function openStackSimulator(options: OpenStackSimulatorOptions = {}): {
  sim: OpenStackSimulator;
  projects: { demo: string; other: string; admin: string };
} {
  const sim = new OpenStackSimulator(options);
  const projects = {
    demo: sim.addProject({ name: 'demo' }),
    other: sim.addProject({ name: 'other' }),
    admin: sim.addProject({ name: 'admin' }),
  };
  sim.addUser({ name: OS.demoUser, password: OS.demoPassword, projects: { demo: ['member'] }, defaultProject: 'demo' });
  sim.addUser({ name: OS.otherUser, password: OS.otherPassword, projects: { other: ['member'] } });
  sim.addUser({
    name: OS.adminUser,
    password: OS.adminPassword,
    projects: { admin: ['admin'], demo: ['admin'] },
    id: 'admin',
  });
  sim.addUser({ name: OS.viewerUser, password: OS.viewerPassword, projects: { demo: ['reader'] } });
  return { sim, projects };
}

/** {@link openStackSimulator}, listening on free loopback ports, with tokens; stopped by `disposeAll()`. */
export async function startOpenStack(options: OpenStackSimulatorOptions = {}): Promise<OpenStackUnderTest> {
  const { sim, projects } = openStackSimulator(options);
  const { demo, other } = projects;
  const { keystoneUrl } = await sim.listen();
  leftovers.push(() => sim.close());
  return {
    sim,
    keystoneUrl,
    demo,
    other,
    demoToken: sim.issueToken({ user: OS.demoUser, project: 'demo' }),
    otherToken: sim.issueToken({ user: OS.otherUser, project: 'other' }),
    adminToken: sim.issueToken({ user: OS.adminUser, project: 'demo' }),
    backend: (id = 'os', extra = {}) => ({
      id,
      kind: 'openstack',
      url: keystoneUrl,
      region: 'RegionOne',
      interface: 'public',
      operationTimeoutMs: 10_000,
      timeoutMs: 5_000,
      maxConnections: 16,
      readRetries: 2,
      ...extra,
    }),
  };
}

/**
 * A gateway over `os` (backend id `os`) whose watcher reads with the admin's service credential
 * (every project; callers never see it), tuned by `watch` (`watchFastMs`, `watchSlowMs` …).
 */
export function watchingGateway(
  os: OpenStackUnderTest,
  watch: Partial<OpenStackBackendConfig> = {},
): Promise<GatewayUnderTest> {
  return startGatewayFor([
    os.backend('os', {
      auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
      ...watch,
    }),
  ]);
}

/** The global id of project demo's volume `nativeId` on backend `os`, read with the demo user's token. */
export async function demoVolumeId(gw: GatewayUnderTest, os: OpenStackUnderTest, nativeId: string): Promise<string> {
  const res = await gw.gql(
    `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
    { n: nativeId, p: os.demo },
    { 'x-auth-token': os.demoToken },
  );
  return res.body.data.volumeByNativeId.id;
}

/** Polls `volumeOperation(id)` until it is terminal (or `timeoutMs` passed); returns it as last read. */
export async function waitOperation(
  gw: GatewayUnderTest,
  id: string,
  headers: Record<string, string>,
  timeoutMs = 15_000,
): Promise<any> {
  const read = async (): Promise<any> => {
    const res = await gw.gql(
      `query($id: ID!) { volumeOperation(id: $id) { id kind state backendStatus failureReason targetId deadlineAt } }`,
      { id },
      headers,
    );
    const op = res.body.data?.volumeOperation;
    if (!op) throw new Error(`operation ${id} not readable: ${JSON.stringify(res.body)}`);
    return op;
  };
  return settle(read, isTerminal, timeoutMs, 25);
}

/** The rejection of `p`, which must reject. */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
