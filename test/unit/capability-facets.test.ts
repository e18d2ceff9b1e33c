/**
 * One capability mechanism: facets on the backend, checked by the compiler, and the advertised
 * `StorageBackend.capabilities` derived from them (adapters/contract/capabilities.ts).
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import { advertise, type BackendFacets, type HostAttachments } from '../../adapters/contract/capabilities';
import { UnsupportedByBackendError } from '../../adapters/contract/errors';
import { createRegistry } from '../../server/backends';
import { BackendRegistry } from '../../domain/registry';
import { KIND_NAMES } from '../../server/kinds';

const registry = createRegistry([
  { id: 'east', kind: 'nomad', url: 'http://127.0.0.1:9', timeoutMs: 1000, maxConnections: 1, readRetries: 0 },
  {
    id: 'os',
    kind: 'openstack',
    url: 'http://127.0.0.1:9/v3',
    region: 'RegionOne',
    interface: 'public',
    operationTimeoutMs: 1000,
    watchFastMs: 500,
    watchSlowMs: 1000,
    timeoutMs: 1000,
    maxConnections: 1,
    readRetries: 0,
  },
]);
afterAll(() => registry.close());

describe('capability facets', () => {
  it('should advertise for the two backends exactly the sets their facets give', () => {
    expect([...registry.forId('east').capabilities].sort()).toEqual([
      'CREATE_SNAPSHOT',
      'CREATE_VOLUME',
      'DELETE_SNAPSHOT',
      'DELETE_VOLUME',
      'DETACH_VOLUME',
      'LIST_EXTERNAL_VOLUMES',
      'LIST_PLUGINS',
      'LIST_SNAPSHOTS',
      'LIST_VOLUMES',
      'READ_VOLUME',
      'REGISTER_VOLUME',
      // A detach waits for Nomad's volume watcher to free the claims (adapters/nomad/completion/).
      'TRACKED_OPERATIONS',
      // The volume doctor's checks (adapters/nomad/diagnosis/).
      'VOLUME_DIAGNOSIS',
    ]);
    expect([...registry.forId('os').capabilities].sort()).toEqual(
      [
        'ATTACH_VOLUME',
        'CREATE_SNAPSHOT',
        'CREATE_VOLUME',
        'DELETE_SNAPSHOT',
        'DELETE_VOLUME',
        'DETACH_VOLUME',
        'EXTEND_VOLUME',
        'HOST_ATTACHMENTS',
        'LIST_SNAPSHOTS',
        'LIST_VOLUMES',
        'READ_SNAPSHOT',
        'READ_VOLUME',
        'REVERT_VOLUME',
        'SERVER_ATTACHMENTS',
        'TRACKED_OPERATIONS',
        'UPDATE_VOLUME',
        'VOLUME_ACTIONS',
        'VOLUME_DIAGNOSIS',
      ].sort(),
    );
  });

  it('should derive a third backend’s set from the facets it has, in the schema’s order', () => {
    const hosts = {} as HostAttachments;
    const facets: BackendFacets = { hostAttachments: hosts, snapshotReads: { getSnapshot: async () => null } };
    expect([...advertise(facets, ['LIST_VOLUMES', 'ATTACH_VOLUME'])]).toEqual([
      'LIST_VOLUMES',
      'ATTACH_VOLUME',
      'READ_SNAPSHOT',
      'HOST_ATTACHMENTS',
    ]);
  });

  it('should hand out a facet the backend has and refuse one it lacks, saying which in the words of the kind that has it', () => {
    const lab = { id: 'lab', hostAttachments: {} as HostAttachments } as unknown as VolumeBackend;
    const r = new BackendRegistry([lab, ...registry.all], { kinds: KIND_NAMES });
    expect(r.capable(lab, 'hostAttachments')).toBe(lab.hostAttachments);
    expect(() => r.capable(lab, 'volumeActions')).toThrow(UnsupportedByBackendError);
    // The texts clients have always had, now from the OpenStack module (adapters/openstack/module.ts).
    expect(() => r.capable(lab, 'volumeActions')).toThrow('backend "lab" does not support Cinder volume actions');
    expect(() => r.capable(lab, 'serverAttachments')).toThrow('backend "lab" does not support Nova servers');
    expect(() => registry.capable(registry.forId('east'), 'volumeActions')).toThrow(
      'backend "east" does not support Cinder volume actions',
    );
    // A registry told no kind's words says the neutral ones.
    expect(() => new BackendRegistry([lab]).capable(lab, 'volumeActions')).toThrow(
      'backend "lab" does not support volume actions',
    );
    expect(r.having('hostAttachments').map((h) => h.backend.id)).toEqual(['lab', 'os']);
    expect(r.having('nodeAttachments').map((h) => h.backend.id)).toEqual(['east']);
  });
});
