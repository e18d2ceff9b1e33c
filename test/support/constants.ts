/**
 * The one set of constants of the test simulators (test/support/harness.ts seeds them): tokens,
 * nodes and plugins of the Nomad simulator; users, passwords and delays of the OpenStack one.
 * Tests import them from here (or through a helper that re-exports them), never spell them again.
 */
import type { PluginSpec } from '../../simulators/nomad';

/** Nomad management token. */
export const MGMT = 'mgmt-secret';
/** Nomad token that reads (and lists) namespace `analytics` only. */
export const ANALYTICS_READ = 'analytics-read-secret';
/** Nomad token that writes namespace `analytics` only. */
export const ANALYTICS_WRITE = 'analytics-write-secret';

/** Nomad client nodes. */
export const NODE1 = 'node-1111';
export const NODE2 = 'node-2222';
export const NOMAD_NODES = [
  { id: NODE1, name: 'client-1' },
  { id: NODE2, name: 'client-2' },
] as const;

/** Nomad CSI plugins: an EBS-like one with a controller, a node-only hostpath one. */
export const NOMAD_PLUGINS: readonly PluginSpec[] = [
  {
    id: 'aws-ebs0',
    provider: 'ebs.csi.aws.com',
    version: 'v1.38.1',
    controllerRequired: true,
    controllersHealthy: 1,
    controllersExpected: 1,
    nodesHealthy: 2,
    nodesExpected: 2,
    topology: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' },
  },
  {
    id: 'hostpath',
    provider: 'hostpath.csi.k8s.io',
    version: 'v1.11.0',
    controllerRequired: false,
    nodesHealthy: 2,
    nodesExpected: 2,
  },
];

/**
 * Keystone users and passwords of the OpenStack simulator: demo (member of project demo), other
 * (member of other), admin (admin of admin and demo), viewer (reader of demo).
 */
export const OS = {
  demoUser: 'demo',
  demoPassword: 'demo-secret',
  otherUser: 'other',
  otherPassword: 'other-secret',
  adminUser: 'admin',
  adminPassword: 'admin-secret',
  viewerUser: 'viewer',
  viewerPassword: 'viewer-secret',
} as const;

/** Small OpenStack transition delays for fast tests (large enough to observe transitional states reliably). */
export const FAST = {
  createMs: 30,
  deleteMs: 30,
  extendMs: 40,
  snapshotMs: 40,
  snapshotDeleteMs: 30,
  revertMs: 40,
  retypeMs: 40,
  uploadMs: 40,
  migrateMs: 30,
  reimageMs: 40,
  unmanageMs: 30,
  attachMs: 40,
  attachCompleteMs: 25,
  attachRollbackMs: 30,
  detachMs: 40,
  serverDeleteMs: 30,
};
