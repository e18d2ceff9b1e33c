/**
 * Test harness: real simulators and a real gateway on free loopback ports, talked to over HTTP.
 * Everything started is registered in `leftovers` and stopped by `disposeAll()`.
 */
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import type { NomadBackendConfig, OpenStackBackendConfig } from '../../server/config';
import type { OperationTrackerOptions } from '../../subscriptions/operations';
import { createLogger } from '../../server/logger';
import { NomadSimulator, type NomadSimulatorOptions } from '../../simulators/nomad';

const leftovers: Array<() => Promise<void>> = [];

export async function disposeAll(): Promise<void> {
  while (leftovers.length > 0) await leftovers.pop()!();
}

export const MGMT = 'mgmt-secret';
export const ANALYTICS_READ = 'analytics-read-secret';
export const ANALYTICS_WRITE = 'analytics-write-secret';

/** A simulator with ACLs on, tokens, two namespaces, two nodes and two plugins; no volumes. */
export async function startNomad(options: NomadSimulatorOptions = {}): Promise<NomadSimulator> {
  const sim = new NomadSimulator({ acl: { enabled: true }, ...options });
  sim.addNamespace('analytics');
  sim.addToken({ secret: MGMT, management: true });
  sim.addToken({ secret: ANALYTICS_READ, namespaces: { analytics: 'read' } });
  sim.addToken({ secret: ANALYTICS_WRITE, namespaces: { analytics: 'write' } });
  sim.addNode({ id: 'node-1111', name: 'client-1' });
  sim.addNode({ id: 'node-2222', name: 'client-2' });
  sim.addPlugin({ id: 'aws-ebs0', provider: 'ebs.csi.aws.com', version: 'v1.38.1', controllerRequired: true, controllersHealthy: 1, controllersExpected: 1, nodesHealthy: 2, nodesExpected: 2, topology: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } });
  sim.addPlugin({ id: 'hostpath', provider: 'hostpath.csi.k8s.io', version: 'v1.11.0', controllerRequired: false, nodesHealthy: 2, nodesExpected: 2 });
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
  gql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

export async function startGatewayFor(
  backends: Array<({ id: string; url: string } & Partial<NomadBackendConfig>) | OpenStackBackendConfig>,
  options: { maxConcurrentReads?: number; operationOptions?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'> } = {},
): Promise<GatewayUnderTest> {
  const registry = createRegistry(
    backends.map((b) => (b.kind === 'openstack' ? b : { kind: 'nomad' as const, timeoutMs: 5_000, maxConnections: 16, readRetries: 2, ...b })),
  );
  const gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: options.maxConcurrentReads ?? 16, maxBodyBytes: 1_048_576 },
    registry,
    logger: createLogger('silent'),
    operationOptions: options.operationOptions,
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
      return { status: res.status, body: (await res.json()) as any };
    },
  };
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
