/**
 * The views and facts bench/doctor.ts runs the doctor's checks on, as the backends' wire shows
 * them (mapped by each adapter's own results functions there): most volumes healthy, a few in
 * each condition the checks find, deterministic.
 */
import type { NomadDiagnosisFacts } from '../adapters/nomad/diagnosis';
import type { InstanceHealth } from '../adapters/nomad/diagnosis/facts';
import type { WireAllocStub, WireVolume } from '../adapters/nomad/wire/types';
import type { CinderVolume } from '../adapters/openstack/cinder/results';
import type { NovaFacts, ServerFacts } from '../adapters/openstack/diagnosis/facts';

const HOUR_MS = 3_600_000;
const NODES = 50;
/** Node instances of the plugin that are down: node-10 holds some of the failed allocations' claims. */
const DOWN_NODES = new Set(['node-10', 'node-37']);
const PLUGIN = 'aws-ebs0';

const nanos = (ms: number): string => `${ms}000000`;
const node = (i: number): string => `node-${String(i % NODES).padStart(2, '0')}`;

function alloc(id: string, nodeId: string, client: string, desired: string, modifiedMs: number): WireAllocStub {
  return {
    ID: id,
    Name: `${id}.group[0]`,
    Namespace: 'default',
    NodeID: nodeId,
    NodeName: nodeId,
    JobID: `job-${id}`,
    JobType: 'service',
    TaskGroup: 'group',
    DesiredStatus: desired,
    ClientStatus: client,
    CreateTime: nanos(modifiedMs - HOUR_MS),
    ModifyTime: nanos(modifiedMs),
  };
}

/**
 * `n` full Nomad volume reads: 60 % claimed by a running allocation, 3 % by a failed one (stopped,
 * its claim left, an hour ago), 1 % by a collected one (the id without a stub), the rest idle.
 */
export function nomadWire(n: number, now: number): WireVolume[] {
  return Array.from({ length: n }, (_, i): WireVolume => {
    const id = `vol-${String(i).padStart(5, '0')}`;
    const r = i % 100;
    const allocId = `alloc-${String(i).padStart(5, '0')}`;
    const allocs: WireAllocStub[] = [];
    const writers: Record<string, unknown> = {};
    if (r < 60) allocs.push(alloc(allocId, node(i), 'running', 'run', now - HOUR_MS));
    else if (r < 63) allocs.push(alloc(allocId, node(i), 'failed', 'stop', now - HOUR_MS));
    if (r < 64) writers[allocId] = null;
    return {
      ID: id,
      Namespace: 'default',
      Name: id,
      ExternalID: `vol-0${i.toString(16).padStart(16, '0')}`,
      Topologies: [{ Segments: { 'topology.ebs.csi.aws.com/zone': 'eu-west-1a' } }],
      AccessMode: 'single-node-writer',
      AttachmentMode: 'file-system',
      Schedulable: true,
      PluginID: PLUGIN,
      Provider: 'ebs.csi.aws.com',
      ControllerRequired: true,
      ControllersHealthy: 1,
      ControllersExpected: 1,
      NodesHealthy: NODES - DOWN_NODES.size,
      NodesExpected: NODES,
      CreateIndex: 10 + i,
      ModifyIndex: 20 + i,
      CreateTime: 0,
      ModifyTime: nanos(now - HOUR_MS),
      RequestedTopologies: null,
      MountOptions: { FSType: 'ext4', MountFlags: null },
      Parameters: { type: 'gp3' },
      Context: null,
      Capacity: 10 * 1024 ** 3,
      RequestedCapacityMin: 10 * 1024 ** 3,
      RequestedCapacityMax: 0,
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
      CloneID: '',
      SnapshotID: '',
      ReadAllocs: {},
      WriteAllocs: writers,
      ProviderVersion: 'v1.38.1',
      Allocations: allocs,
    };
  });
}

/** One pass's plugin facts: the plugin read (some node instances down), with every node's instance. */
export function nomadFacts(now: number): NomadDiagnosisFacts {
  const instances = new Map<string, InstanceHealth>();
  for (let i = 0; i < NODES; i++)
    instances.set(node(i), {
      healthy: !DOWN_NODES.has(node(i)),
      since: new Date(now - HOUR_MS).toISOString(),
      description: DOWN_NODES.has(node(i)) ? 'failed fingerprinting' : 'healthy',
      allocationId: `plugin-alloc-${i}`,
    });
  return {
    plugins: new Map([
      [
        PLUGIN,
        {
          controllerRequired: true,
          controllers: { healthy: 1, expected: 1 },
          nodes: { healthy: NODES - DOWN_NODES.size, expected: NODES },
          nodeInstances: instances,
          controllersDownSince: null,
        },
      ],
    ]),
  };
}

/** Every status the OpenStack checks time or call an error, 1 % of volumes each. */
const ODD_STATUSES = [
  'creating',
  'attaching',
  'reserved',
  'detaching',
  'extending',
  'deleting',
  'downloading',
  'uploading',
  'backing-up',
  'restoring-backup',
  'retyping',
  'maintenance',
  'error',
  'error_deleting',
  'error_extending',
  'error_restoring',
];

const uuid = (prefix: string, i: number): string => `${prefix}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/** Cinder volumes of one project and the servers they are attached to. */
export interface CinderWire {
  project: string;
  volumes: CinderVolume[];
  /** Server id → the volume ids Nova lists for it; a server not here was deleted. */
  servers: Map<string, string[]>;
}

/**
 * `n` Cinder volumes: 40 % `in-use`, each attached to its own server; 1 % in each odd status; the
 * rest `available`. Nova lists each attached volume's server, but 1 % of them are deleted (Cinder
 * keeps the attachment), and 1 % of servers list an extra volume Cinder has no attachment of (a
 * dangling mapping).
 */
export function cinderWire(n: number, now: number): CinderWire {
  const project = 'bench-project';
  const servers = new Map<string, string[]>();
  const volumes = Array.from({ length: n }, (_, i): CinderVolume => {
    const id = uuid('00000000', i);
    const r = i % 100;
    const odd = r >= 40 && r < 40 + ODD_STATUSES.length ? ODD_STATUSES[r - 40]! : null;
    const inUse = r < 40;
    const server = uuid('11111111', i);
    if (inUse && r !== 39) servers.set(server, [id]);
    // A dangling mapping: the server lists an available volume too.
    if (r === 0) servers.get(server)!.push(uuid('00000000', i + 70));
    return {
      id,
      status: odd ?? (inUse ? 'in-use' : 'available'),
      size: 10,
      availability_zone: 'nova',
      created_at: new Date(now - 24 * HOUR_MS).toISOString().slice(0, 23),
      updated_at: new Date(now - (odd ? HOUR_MS : 2 * HOUR_MS)).toISOString().slice(0, 23),
      name: `vol-${i}`,
      description: null,
      volume_type: 'lvmdriver-1',
      metadata: inUse ? { attached_mode: 'rw' } : {},
      bootable: 'false',
      encrypted: false,
      multiattach: false,
      attachments: inUse
        ? [
            {
              id,
              attachment_id: uuid('22222222', i),
              volume_id: id,
              server_id: server,
              host_name: 'compute-1',
              device: '/dev/vdb',
              attached_at: new Date(now - 2 * HOUR_MS).toISOString().slice(0, 23),
            },
          ]
        : [],
      'os-vol-tenant-attr:tenant_id': project,
    };
  });
  return { project, volumes, servers };
}

/** The Nova listing of one pass, as `readNovaFacts` builds it (an admin's: every project). */
export function novaFacts(w: CinderWire): NovaFacts {
  const servers = new Map<string, ServerFacts>();
  const holders = new Map<string, string[]>();
  for (const [id, volumeIds] of w.servers) {
    servers.set(id, { id, projectId: w.project, status: 'ACTIVE', volumeIds });
    for (const v of volumeIds) holders.set(v, [...(holders.get(v) ?? []), id]);
  }
  return { allProjects: true, projectId: w.project, servers, holders, pages: Math.ceil(servers.size / 1000) };
}
