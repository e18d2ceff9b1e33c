/**
 * Data the memory backend starts from when no data file is given: a small default set, or a
 * generated one of any size (the fast-path bench asks for 100 volumes × 2 attachments). Both are
 * deterministic: the same request gives the same data, so runs compare.
 */
import type { MemoryData, VolumeData } from './shape';

/** What to generate. */
export interface SeedOptions {
  /** Volumes to make. @default 100 */
  volumes: number;
  /** Host attachments per volume. @default 2 */
  attachmentsPerVolume: number;
  /** Namespaces the volumes are spread over, round robin. @default ['default'] */
  namespaces?: readonly string[];
  /** Snapshots per volume. @default 0 */
  snapshotsPerVolume?: number;
}

const GIB = 1024 ** 3;
/** A fixed instant, so generated data never depend on the clock. */
const EPOCH = Date.parse('2026-01-01T00:00:00Z');
const at = (minutes: number): string => new Date(EPOCH + minutes * 60_000).toISOString();

/** `n` volumes `vol-0000`… with `attachmentsPerVolume` host attachments each (hosts `host-00`…). */
export function generateSeed(o: SeedOptions): MemoryData {
  const namespaces = o.namespaces && o.namespaces.length > 0 ? o.namespaces : ['default'];
  const width = Math.max(4, String(o.volumes - 1).length);
  const volumes: VolumeData[] = [];
  const snapshots: NonNullable<MemoryData['snapshots']> = [];
  for (let i = 0; i < o.volumes; i++) {
    const id = `vol-${String(i).padStart(width, '0')}`;
    const namespace = namespaces[i % namespaces.length]!;
    const sizeBytes = (1 + (i % 8)) * 10 * GIB;
    volumes.push({
      namespace,
      id,
      name: `volume ${i}`,
      sizeBytes,
      description: null,
      metadata: { tier: i % 2 === 0 ? 'gold' : 'silver' },
      createdAt: at(i),
      updatedAt: at(i),
      attachments: Array.from({ length: o.attachmentsPerVolume }, (_, k) => ({
        id: `${id}-att-${k}`,
        host: `host-${String((i + k) % 100).padStart(2, '0')}`,
        readOnly: k > 0,
        device: `/dev/vd${String.fromCharCode(98 + (k % 24))}`,
        attachedAt: at(i + 1),
      })),
    });
    for (let k = 0; k < (o.snapshotsPerVolume ?? 0); k++) {
      snapshots.push({
        namespace,
        id: `${id}-snap-${k}`,
        volumeId: id,
        name: `snapshot ${k} of volume ${i}`,
        sizeBytes,
        createdAt: at(i + 2 + k),
        ready: true,
      });
    }
  }
  return { volumes, snapshots };
}

/**
 * The default set: two namespaces, volumes idle and attached, a snapshot, and three tokens
 * (`lab-admin` sees everything, `lab-dev` writes `dev` and reads `default`, `lab-viewer` reads
 * `default`), so a front end can show access denial as well as data. The tokens are well known:
 * give a data file with tokens of your own anywhere that matters.
 */
export function defaultSeed(): MemoryData {
  return {
    volumes: [
      {
        namespace: 'default',
        id: 'pg-data',
        name: 'postgres data',
        sizeBytes: 50 * GIB,
        description: 'primary database',
        metadata: { team: 'db' },
        createdAt: at(0),
        updatedAt: at(0),
        attachments: [{ id: 'pg-data-att', host: 'db-1', device: '/dev/vdb', attachedAt: at(1) }],
      },
      {
        namespace: 'default',
        id: 'shared-assets',
        name: 'shared assets',
        sizeBytes: 20 * GIB,
        description: null,
        metadata: {},
        createdAt: at(2),
        updatedAt: at(2),
        attachments: [
          { id: 'assets-web-1', host: 'web-1', readOnly: true, device: '/dev/vdc', attachedAt: at(3) },
          { id: 'assets-web-2', host: 'web-2', readOnly: true, device: '/dev/vdc', attachedAt: at(3) },
        ],
      },
      { namespace: 'default', id: 'scratch', name: 'scratch', sizeBytes: 10 * GIB, createdAt: at(4), updatedAt: at(4) },
      {
        namespace: 'dev',
        id: 'dev-cache',
        name: 'dev cache',
        sizeBytes: 5 * GIB,
        metadata: { owner: 'dev' },
        createdAt: at(5),
        updatedAt: at(5),
      },
    ],
    snapshots: [
      {
        namespace: 'default',
        id: 'pg-data-nightly',
        volumeId: 'pg-data',
        name: 'nightly',
        sizeBytes: 50 * GIB,
        description: 'nightly backup',
        createdAt: at(6),
        ready: true,
      },
    ],
    tokens: [
      { token: 'lab-admin', name: 'admin', admin: true, grants: [{ namespace: '*', write: true }] },
      { token: 'lab-dev', name: 'developer', grants: [{ namespace: 'dev', write: true }, { namespace: 'default' }] },
      { token: 'lab-viewer', name: 'viewer', grants: [{ namespace: 'default' }] },
    ],
  };
}
