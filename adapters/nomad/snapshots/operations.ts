/**
 * The Nomad backend's snapshot methods. Snapshots live in a plugin's controller, so they are
 * listed per plugin and deleted by plugin and id (`SnapshotRef.scope` is the plugin).
 */
import type { Accepted, CallOptions, OpaquePage, SnapshotListQuery, SnapshotRef, SnapshotSpec } from '../../contract/backend';
import { BadUserInputError, NotFoundError } from '../../contract/errors';
import type { KeyValue, Snapshot, VolumeRef } from '../../contract/model';
import type { NomadContext } from '../context';
import { volumeDetails } from '../volumes/operations';
import { checkCsiSecrets } from '../wire/csi-secrets';
import * as req from './requests';
import { toSnapshot } from './results';

/**
 * A plugin's snapshots. With `q.volume`, the plugin defaults to the volume's and the page keeps
 * that volume's snapshots only (one read first; Nomad's list has no such filter, so a page may
 * hold fewer than `limit`).
 */
export async function listSnapshots(ctx: NomadContext, q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
  const secrets = checkCsiSecrets(q.secrets, 'secrets');
  let pluginId = q.pluginId;
  let source: { ref: VolumeRef; remoteId: string } | undefined;
  if (q.volume) {
    const d = await volumeDetails(ctx, q.volume, o);
    pluginId ??= d.pluginId ?? undefined;
    // The provider names a volume by its ExternalID, or by the Nomad id when it has none (CSIVolume.RemoteID).
    source = { ref: q.volume, remoteId: d.externalId ?? q.volume.nativeId };
  }
  if (!pluginId) throw new BadUserInputError('Nomad lists snapshots per plugin: name the plugin (pluginId)', 'pluginId');
  const { data } = await req.listSnapshots(ctx.client, { pluginId, perPage: q.limit, nextToken: q.token ?? undefined, secrets }, o);
  const wire = (data?.Snapshots ?? []).filter((w) => !source || w.ExternalSourceVolumeID === source.remoteId);
  return { items: wire.map((w) => toSnapshot(ctx.backend, w, { pluginId: pluginId!, sourceVolume: source?.ref })), next: data?.NextToken || null };
}

export async function createSnapshot(ctx: NomadContext, spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
  const body = req.snapshotRequest(spec);
  // Create replies leave PluginID empty (backends.md 1.4.9); read the volume's first, so a
  // failed read never follows a snapshot that was made.
  const pluginId = spec.pluginId ?? (await volumeDetails(ctx, spec.volume, o)).pluginId ?? '';
  const { data } = await req.createSnapshot(ctx.client, { ...body, PluginID: pluginId || undefined }, spec.volume.namespace, o);
  const made = data?.Snapshots?.[0];
  if (!made) throw new NotFoundError(`backend "${ctx.backend}" reported no snapshot for volume "${spec.volume.nativeId}"`, { backend: ctx.backend });
  return { result: toSnapshot(ctx.backend, made, { pluginId, name: spec.name, sourceVolume: spec.volume }), pending: null };
}

/** `ref.scope` is the plugin that holds the snapshot. */
export async function deleteSnapshot(ctx: NomadContext, ref: SnapshotRef, secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>> {
  await req.deleteSnapshot(ctx.client, ref.scope, ref.nativeId, checkCsiSecrets(secrets, 'input.secrets'), o);
  return { result: undefined, pending: null };
}
