/**
 * Nomad's snapshot calls (api/csi.go), one function per operation: path from `urls.ts`, query,
 * body and CSI secrets header. Snapshots live in the plugin's controller; Nomad keeps no record.
 */
import type { CallOptions } from '../../contract/call-options';
import type { KeyValue, VolumeRef } from '../../contract/model';
import type { NomadClient, NomadResult } from '../client';
import { secretsHeader } from '../wire/csi-secrets';
import { goStringMap } from '../wire/scalars';
import type { WireSnapshotCreateReply, WireSnapshotList } from '../wire/types';
import type { NomadSnapshot } from './input';
import * as urls from './urls';

export interface SnapshotRequest {
  SourceVolumeID: string;
  PluginID?: string;
  Name: string;
  Secrets?: Record<string, string>;
  Parameters?: Record<string, string>;
}

/** The snapshot create body for a checked create (`input.ts`) of `volume`. */
export function snapshotRequest(volume: VolumeRef, name: string, s: NomadSnapshot): SnapshotRequest {
  return {
    SourceVolumeID: volume.nativeId,
    PluginID: s.pluginId,
    Name: name,
    Secrets: goStringMap(s.secrets),
    Parameters: goStringMap(s.parameters),
  };
}

/** Creates snapshots of volumes in `namespace`. Any failure is a 500, even if others were made. */
export function createSnapshot(
  c: NomadClient,
  s: SnapshotRequest,
  namespace: string,
  o: CallOptions,
): Promise<NomadResult<WireSnapshotCreateReply>> {
  return c.call(
    {
      method: 'POST',
      path: urls.snapshotsURL(),
      endpoint: 'POST /v1/volumes/snapshot',
      query: new URLSearchParams({ namespace }),
      body: { Snapshots: [s] },
      action: `creating a snapshot of volume "${s.SourceVolumeID}"`,
    },
    o,
  );
}

export function deleteSnapshot(
  c: NomadClient,
  pluginId: string,
  snapshotId: string,
  secrets: KeyValue[],
  o: CallOptions,
): Promise<NomadResult<void>> {
  return c.call(
    {
      method: 'DELETE',
      path: urls.snapshotsURL(),
      endpoint: 'DELETE /v1/volumes/snapshot',
      query: new URLSearchParams({ plugin_id: pluginId, snapshot_id: snapshotId }),
      headers: secretsHeader(secrets),
      action: `deleting snapshot "${snapshotId}"`,
    },
    o,
  );
}

export function listSnapshots(
  c: NomadClient,
  opts: { pluginId: string; perPage?: number; nextToken?: string; secrets: KeyValue[] },
  o: CallOptions,
): Promise<NomadResult<WireSnapshotList>> {
  const q = new URLSearchParams({ plugin_id: opts.pluginId });
  if (opts.perPage) q.set('per_page', String(opts.perPage));
  if (opts.nextToken) q.set('next_token', opts.nextToken);
  return c.call(
    {
      method: 'GET',
      path: urls.snapshotsURL(),
      endpoint: 'GET /v1/volumes/snapshot',
      query: q,
      headers: secretsHeader(opts.secrets),
      action: `listing snapshots of plugin "${opts.pluginId}"`,
    },
    o,
  );
}
