/**
 * Demo data: region RegionOne; projects `demo`, `other` and `admin`; users `demo`
 * (member of demo, default project demo, like keystone-22's), `other` and `admin`; an
 * application credential for demo; four ACTIVE servers and eight volumes in demo (in-use ones
 * attached with devices, a multiattach volume on two servers, a boot-from-volume root disk,
 * bootable and image volumes — the multiattach one of the default `multiattach` type), two
 * snapshots, and two volumes in `other`. Ids are fixed.
 */
import type { Role } from './model';

/** The subset of OpenStackSimulator the demo needs. */
export interface DemoTarget {
  addProject(p: { name: string; id?: string }): string;
  addUser(u: {
    name: string;
    password: string;
    projects?: Record<string, Role[]>;
    defaultProject?: string;
    id?: string;
  }): string;
  addApplicationCredential(a: { user: string; project: string; name: string; secret: string; id?: string }): string;
  seedVolume(v: Record<string, unknown> & { project: string }): string;
  seedServer(s: { project: string; name: string; id?: string; rootVolumeId?: string }): string;
  attachNow(serverId: string, volumeId: string, o?: { device?: string; deleteOnTermination?: boolean }): string;
  seedSnapshot(s: { volumeId: string; name?: string; id?: string }): string;
}

export interface DemoCredentials {
  region: string;
  domain: 'Default';
  projects: { demo: string; other: string; admin: string };
  /** Member of `demo` (password auth scoped to project `demo`, domain `Default`). */
  demo: { username: string; password: string; project: string; userId: string };
  other: { username: string; password: string; project: string; userId: string };
  /** Admin of project `admin` (sees every project with `all_tenants`). */
  admin: { username: string; password: string; project: string; userId: string };
  applicationCredential: { id: string; name: string; secret: string };
  servers: Record<string, string>;
  volumes: Record<string, string>;
  snapshots: Record<string, string>;
}

const vol = (n: number): string => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const srv = (n: number): string => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const snap = (n: number): string => `e0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function seedDemo(sim: DemoTarget, region: string): DemoCredentials {
  const projects = {
    demo: sim.addProject({ name: 'demo', id: 'c0bcf3baf0154b5bb4dd2f8ed959cdd6' }),
    other: sim.addProject({ name: 'other', id: 'a0c8543cfdfb47aa82f9264cadfc099d' }),
    admin: sim.addProject({ name: 'admin', id: '149d3e5f178f4262856cfa4e2c8f4a0e' }),
  };
  const demoUser = sim.addUser({
    name: 'demo',
    password: 'demo-secret',
    projects: { demo: ['member'] },
    defaultProject: 'demo',
    id: '134a198a4d754cd3b091303367254a84',
  });
  const otherUser = sim.addUser({
    name: 'other',
    password: 'other-secret',
    projects: { other: ['member'] },
    defaultProject: 'other',
    id: '4a8e81624e73454d805a26627fe8e2fb',
  });
  const adminUser = sim.addUser({
    name: 'admin',
    password: 'admin-secret',
    projects: { admin: ['admin'] },
    defaultProject: 'admin',
    id: '5b1e3a7c9d2f4e6a8b0c1d2e3f4a5b6c',
  });
  const appCred = { id: '9aacd8ecaaa644ad846df3ffba9c17d2', name: 'demo-appcred', secret: 'demo-appcred-secret' };
  sim.addApplicationCredential({ user: 'demo', project: 'demo', ...appCred });

  const volumes: Record<string, string> = {
    'db-root': sim.seedVolume({
      project: 'demo',
      name: 'db-root',
      size: 10,
      bootable: true,
      image_metadata: {
        image_name: 'debian-12',
        disk_format: 'qcow2',
        container_format: 'bare',
        min_disk: '0',
        min_ram: '0',
      },
      id: vol(1),
    }),
    'db-data': sim.seedVolume({
      project: 'demo',
      name: 'db-data',
      size: 50,
      metadata: { tier: 'gold', app: 'postgres' },
      id: vol(2),
    }),
    'web-shared': sim.seedVolume({
      project: 'demo',
      name: 'web-shared',
      size: 5,
      multiattach: true,
      description: 'static assets shared by the web tier',
      id: vol(3),
    }),
    'web-1-logs': sim.seedVolume({ project: 'demo', name: 'web-1-logs', size: 2, id: vol(4) }),
    scratch: sim.seedVolume({ project: 'demo', name: 'scratch', size: 1, id: vol(5) }),
    'backup-target': sim.seedVolume({
      project: 'demo',
      name: 'backup-target',
      size: 20,
      metadata: { purpose: 'backups' },
      id: vol(6),
    }),
    'golden-image': sim.seedVolume({
      project: 'demo',
      name: 'golden-image',
      size: 8,
      bootable: true,
      image_metadata: { image_name: 'ubuntu-24.04', disk_format: 'raw', container_format: 'bare' },
      id: vol(7),
    }),
    'batch-input': sim.seedVolume({ project: 'demo', name: 'batch-input', size: 3, id: vol(8) }),
    'other-data': sim.seedVolume({ project: 'other', name: 'other-data', size: 4, id: vol(9) }),
    'other-scratch': sim.seedVolume({ project: 'other', name: 'other-scratch', size: 1, id: vol(10) }),
  };
  const servers: Record<string, string> = {
    'db-1': sim.seedServer({ project: 'demo', name: 'db-1', rootVolumeId: volumes['db-root']!, id: srv(1) }),
    'web-1': sim.seedServer({ project: 'demo', name: 'web-1', id: srv(2) }),
    'web-2': sim.seedServer({ project: 'demo', name: 'web-2', id: srv(3) }),
    'batch-1': sim.seedServer({ project: 'demo', name: 'batch-1', id: srv(4) }),
  };
  sim.attachNow(servers['db-1']!, volumes['db-data']!, { device: '/dev/sdb' });
  sim.attachNow(servers['web-1']!, volumes['web-shared']!, { device: '/dev/sdb' });
  sim.attachNow(servers['web-2']!, volumes['web-shared']!, { device: '/dev/sdb' });
  sim.attachNow(servers['web-1']!, volumes['web-1-logs']!, { device: '/dev/sdc', deleteOnTermination: true });
  const snapshots = {
    'db-data-nightly': sim.seedSnapshot({ volumeId: volumes['db-data']!, name: 'db-data-nightly', id: snap(1) }),
    'golden-image-v1': sim.seedSnapshot({ volumeId: volumes['golden-image']!, name: 'golden-image-v1', id: snap(2) }),
  };
  return {
    region,
    domain: 'Default',
    projects,
    demo: { username: 'demo', password: 'demo-secret', project: 'demo', userId: demoUser },
    other: { username: 'other', password: 'other-secret', project: 'other', userId: otherUser },
    admin: { username: 'admin', password: 'admin-secret', project: 'admin', userId: adminUser },
    applicationCredential: appCred,
    servers,
    volumes,
    snapshots,
  };
}
