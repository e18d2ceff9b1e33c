/**
 * Demo data for a simulated Nomad cluster ("east" or "west"), with fixed ids so docs and
 * examples can name them. Each cluster has namespaces `default` and `analytics`, a management
 * token and a token that may only read `analytics`, client nodes, an EBS-like controller plugin
 * (`aws-ebs0`) and a node-only plugin (`hostpath`), volumes in both namespaces, running
 * allocations holding read and write claims, two provider snapshots and provider volumes that
 * Nomad doesn't know about.
 */
import type { NomadSimulator } from './index';

const GiB = 1024 * 1024 * 1024;

interface DemoVolume {
  id: string;
  name: string;
  namespace: 'default' | 'analytics';
  plugin: 'aws-ebs0' | 'hostpath';
  externalId?: string;
  gib: number;
  access?: string;
  attachment?: string;
  parameters?: Record<string, string>;
}

interface DemoAlloc {
  id: string;
  namespace: 'default' | 'analytics';
  jobId: string;
  taskGroup: string;
  node: number;
  volumes: Array<{ volumeId: string; mode: 'read' | 'write' }>;
}

interface Variant {
  zone: string;
  nodePrefix: string;
  nodeNames: string[];
  volumes: DemoVolume[];
  allocs: DemoAlloc[];
  snapshots: Array<{ id: string; volumeId: string }>;
  orphans: Array<{ externalId: string; gib: number }>;
}

const VARIANTS: Record<'east' | 'west', Variant> = {
  east: {
    zone: 'us-east-1a',
    nodePrefix: 'e0000000-0000-4000-8000-00000000000',
    nodeNames: ['east-client-1', 'east-client-2', 'east-client-3'],
    volumes: [
      {
        id: 'postgres-data',
        name: 'postgres data',
        namespace: 'default',
        plugin: 'aws-ebs0',
        externalId: 'vol-0e45000000000a001',
        gib: 20,
        parameters: { type: 'gp3' },
      },
      {
        id: 'redis-cache',
        name: 'redis cache',
        namespace: 'default',
        plugin: 'aws-ebs0',
        externalId: 'vol-0e45000000000a002',
        gib: 5,
        parameters: { type: 'gp3' },
      },
      {
        id: 'uploads',
        name: 'user uploads',
        namespace: 'default',
        plugin: 'aws-ebs0',
        externalId: 'vol-0e45000000000a003',
        gib: 50,
        parameters: { type: 'st1' },
      },
      { id: 'grafana', name: 'grafana state', namespace: 'default', plugin: 'hostpath', gib: 1 },
      {
        id: 'warehouse-scratch',
        name: 'warehouse scratch',
        namespace: 'analytics',
        plugin: 'aws-ebs0',
        externalId: 'vol-0e45000000000b001',
        gib: 100,
        parameters: { type: 'io2' },
      },
      {
        id: 'notebooks',
        name: 'shared notebooks',
        namespace: 'analytics',
        plugin: 'aws-ebs0',
        externalId: 'vol-0e45000000000b002',
        gib: 10,
        access: 'multi-node-reader-only',
        parameters: { type: 'io2' },
      },
      { id: 'spark-shuffle', name: 'spark shuffle', namespace: 'analytics', plugin: 'hostpath', gib: 8 },
    ],
    allocs: [
      {
        id: 'e0a10c00-0000-4000-8000-000000000001',
        namespace: 'default',
        jobId: 'postgres',
        taskGroup: 'db',
        node: 0,
        volumes: [{ volumeId: 'postgres-data', mode: 'write' }],
      },
      {
        id: 'e0a10c00-0000-4000-8000-000000000002',
        namespace: 'default',
        jobId: 'redis',
        taskGroup: 'cache',
        node: 1,
        volumes: [{ volumeId: 'redis-cache', mode: 'write' }],
      },
      {
        id: 'e0a10c00-0000-4000-8000-000000000003',
        namespace: 'default',
        jobId: 'grafana',
        taskGroup: 'web',
        node: 0,
        volumes: [{ volumeId: 'grafana', mode: 'write' }],
      },
      {
        id: 'e0a10c00-0000-4000-8000-000000000004',
        namespace: 'analytics',
        jobId: 'jupyter',
        taskGroup: 'notebook',
        node: 1,
        volumes: [{ volumeId: 'notebooks', mode: 'read' }],
      },
      {
        id: 'e0a10c00-0000-4000-8000-000000000005',
        namespace: 'analytics',
        jobId: 'jupyter',
        taskGroup: 'notebook',
        node: 2,
        volumes: [{ volumeId: 'notebooks', mode: 'read' }],
      },
    ],
    snapshots: [
      { id: 'snap-0e45000000000c001', volumeId: 'postgres-data' },
      { id: 'snap-0e45000000000c002', volumeId: 'warehouse-scratch' },
    ],
    orphans: [
      { externalId: 'vol-0e45000000000f001', gib: 30 },
      { externalId: 'vol-0e45000000000f002', gib: 2 },
    ],
  },
  west: {
    zone: 'us-west-2b',
    nodePrefix: 'f0000000-0000-4000-8000-00000000000',
    nodeNames: ['west-client-1', 'west-client-2'],
    volumes: [
      {
        id: 'mysql-data',
        name: 'mysql data',
        namespace: 'default',
        plugin: 'aws-ebs0',
        externalId: 'vol-0a57000000000a001',
        gib: 40,
        parameters: { type: 'gp3' },
      },
      {
        id: 'elastic-hot',
        name: 'elasticsearch hot tier',
        namespace: 'default',
        plugin: 'aws-ebs0',
        externalId: 'vol-0a57000000000a002',
        gib: 200,
        parameters: { type: 'io2' },
      },
      { id: 'prometheus', name: 'prometheus tsdb', namespace: 'default', plugin: 'hostpath', gib: 16 },
      {
        id: 'feature-store',
        name: 'feature store',
        namespace: 'analytics',
        plugin: 'aws-ebs0',
        externalId: 'vol-0a57000000000b001',
        gib: 60,
        parameters: { type: 'gp3' },
      },
      {
        id: 'model-artifacts',
        name: 'model artifacts',
        namespace: 'analytics',
        plugin: 'aws-ebs0',
        externalId: 'vol-0a57000000000b002',
        gib: 25,
        access: 'multi-node-reader-only',
        parameters: { type: 'io2' },
      },
      { id: 'etl-staging', name: 'etl staging', namespace: 'analytics', plugin: 'hostpath', gib: 12 },
    ],
    allocs: [
      {
        id: 'f0a10c00-0000-4000-8000-000000000001',
        namespace: 'default',
        jobId: 'mysql',
        taskGroup: 'db',
        node: 0,
        volumes: [{ volumeId: 'mysql-data', mode: 'write' }],
      },
      {
        id: 'f0a10c00-0000-4000-8000-000000000002',
        namespace: 'default',
        jobId: 'prometheus',
        taskGroup: 'monitoring',
        node: 1,
        volumes: [{ volumeId: 'prometheus', mode: 'write' }],
      },
      {
        id: 'f0a10c00-0000-4000-8000-000000000003',
        namespace: 'analytics',
        jobId: 'serving',
        taskGroup: 'model',
        node: 0,
        volumes: [{ volumeId: 'model-artifacts', mode: 'read' }],
      },
      {
        id: 'f0a10c00-0000-4000-8000-000000000004',
        namespace: 'analytics',
        jobId: 'serving',
        taskGroup: 'model',
        node: 1,
        volumes: [{ volumeId: 'model-artifacts', mode: 'read' }],
      },
    ],
    snapshots: [
      { id: 'snap-0a57000000000c001', volumeId: 'mysql-data' },
      { id: 'snap-0a57000000000c002', volumeId: 'feature-store' },
    ],
    orphans: [{ externalId: 'vol-0a57000000000f001', gib: 15 }],
  },
};

/** The demo tokens for a variant. */
export function demoTokens(variant: 'east' | 'west'): { managementToken: string; readOnlyToken: string } {
  return { managementToken: `demo-${variant}-management`, readOnlyToken: `demo-${variant}-analytics-read` };
}

/** A variant's client node ids, in order (`seedDemoCluster` adds them). */
export function demoNodeIds(variant: 'east' | 'west'): string[] {
  const v = VARIANTS[variant];
  return v.nodeNames.map((_, i) => `${v.nodePrefix}${i + 1}`);
}

/**
 * Seeds the demo cluster into a simulator. Node ids are `e0000000-0000-4000-8000-00000000000N`
 * (east) / `f0000000-…N` (west); allocation ids `e0a10c00-…N` / `f0a10c00-…N`.
 */
export function seedDemoCluster(
  sim: NomadSimulator,
  variant: 'east' | 'west',
): { managementToken: string; readOnlyToken: string } {
  const v = VARIANTS[variant];
  const tokens = demoTokens(variant);
  sim.addNamespace('analytics');
  sim.addToken({ secret: tokens.managementToken, name: `${variant} management`, management: true });
  sim.addToken({
    secret: tokens.readOnlyToken,
    name: `${variant} analytics read-only`,
    namespaces: { analytics: 'read' },
  });

  const nodeIds = demoNodeIds(variant);
  nodeIds.forEach((id, i) => sim.addNode({ id, name: v.nodeNames[i]! }));

  const zoneKey = 'topology.ebs.csi.aws.com/zone';
  sim.addPlugin({
    id: 'aws-ebs0',
    provider: 'ebs.csi.aws.com',
    version: 'v1.38.1',
    controllerRequired: true,
    controllersHealthy: 2,
    controllersExpected: 2,
    topology: { [zoneKey]: v.zone },
  });
  sim.addPlugin({
    id: 'hostpath',
    provider: 'hostpath.csi.k8s.io',
    version: 'v1.14.0',
    controllerRequired: false,
  });

  for (const vol of v.volumes) {
    sim.seedVolume({
      ID: vol.id,
      Name: vol.name,
      Namespace: vol.namespace,
      PluginID: vol.plugin,
      ...(vol.externalId ? { ExternalID: vol.externalId } : {}),
      RequestedCapacityMin: vol.gib * GiB,
      Capacity: vol.gib * GiB,
      RequestedCapabilities: [{ AccessMode: vol.access ?? 'single-node-writer', AttachmentMode: 'file-system' }],
      MountOptions: { FSType: 'ext4', MountFlags: vol.plugin === 'aws-ebs0' ? ['noatime'] : null },
      ...(vol.parameters ? { Parameters: vol.parameters } : {}),
      ...(vol.plugin === 'aws-ebs0'
        ? { RequestedTopologies: { Required: [{ Segments: { [zoneKey]: v.zone } }] } }
        : {}),
    });
  }

  for (const a of v.allocs) {
    sim.placeAllocation({
      id: a.id,
      namespace: a.namespace,
      jobId: a.jobId,
      taskGroup: a.taskGroup,
      nodeId: nodeIds[a.node]!,
      volumes: a.volumes,
    });
  }

  const base = Date.UTC(2025, 0, 6, 19, 0, 0) / 1000;
  v.snapshots.forEach((s, i) => {
    const vol = v.volumes.find((x) => x.id === s.volumeId)!;
    sim.addSnapshot('aws-ebs0', {
      ID: s.id,
      ExternalSourceVolumeID: vol.externalId!,
      SizeBytes: vol.gib * GiB,
      CreateTime: base + i * 3600,
      IsReady: true,
    });
  });
  for (const o of v.orphans)
    sim.addExternalVolume('aws-ebs0', { ExternalID: o.externalId, CapacityBytes: o.gib * GiB });
  return tokens;
}
