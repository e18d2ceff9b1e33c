/**
 * The Nomad backend's snapshot methods. Snapshots live in a plugin's controller, so they are
 * listed per plugin and deleted by plugin and id (`SnapshotRef.scope` is the plugin).
 */
import type { Accepted, OpaquePage } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { DeleteSnapshotOptions, SnapshotListQuery, SnapshotRef, SnapshotSpec } from '../../contract/call-inputs';
import { BadUserInputError, NotFoundError } from '../../contract/errors';
import type { Snapshot, VolumeRef } from '../../contract/model';
import type { NomadContext } from '../context';
import { volumeDetails } from '../volumes/operations';
import { deleteInput, LIST_PLUGIN_FIELD, listInput, snapshotInput } from './input';
import * as req from './requests';
import { toSnapshot } from './results';

/**
 * A plugin's snapshots. With `q.volume`, the plugin defaults to the volume's and the page keeps
 * that volume's snapshots only (one read first; Nomad's list has no such filter, so a page may
 * hold fewer than `limit`).
 */
export async function listSnapshots(
  ctx: NomadContext,
  q: SnapshotListQuery,
  o: CallOptions,
): Promise<OpaquePage<Snapshot>> {
  const own = listInput(q);
  const secrets = own.secrets;
  let pluginId = own.pluginId;
  let source: { ref: VolumeRef; remoteId: string } | undefined;
  if (q.volume) {
    const d = await volumeDetails(ctx, q.volume, o);
    pluginId ??= d.pluginId ?? undefined;
    // The provider names a volume by its ExternalID, or by the Nomad id when it has none (CSIVolume.RemoteID).
    source = { ref: q.volume, remoteId: d.externalId ?? q.volume.nativeId };
  }
  if (!pluginId)
    throw BadUserInputError.atField(
      LIST_PLUGIN_FIELD,
      (name) => `Nomad lists snapshots per plugin: name the plugin (${name(LIST_PLUGIN_FIELD)})`,
    );
  const { data } = await req.listSnapshots(
    ctx.client,
    { pluginId, perPage: q.limit, nextToken: q.token ?? undefined, secrets },
    o,
  );
  const wire = (data?.Snapshots ?? []).filter((w) => !source || w.ExternalSourceVolumeID === source.remoteId);
  return {
    items: wire.map((w) => toSnapshot(ctx.backend, w, { pluginId, sourceVolume: source?.ref })),
    next: data?.NextToken || null,
  };
}

export async function createSnapshot(
  ctx: NomadContext,
  spec: SnapshotSpec,
  o: CallOptions,
): Promise<Accepted<Snapshot>> {
  const own = snapshotInput(spec);
  const body = req.snapshotRequest(spec.volume, spec.name, own);
  // Create replies leave PluginID empty (hashicorp/nomad nomad/csi_endpoint.go `CreateSnapshot`);
  // read the volume's first, so a failed read never follows a snapshot that was made.
  const pluginId = own.pluginId ?? (await volumeDetails(ctx, spec.volume, o)).pluginId ?? '';
  const { data } = await req.createSnapshot(
    ctx.client,
    { ...body, PluginID: pluginId || undefined },
    spec.volume.namespace,
    o,
  );
  const made = data?.Snapshots?.[0];
  if (!made)
    throw new NotFoundError(`backend "${ctx.backend}" reported no snapshot for volume "${spec.volume.nativeId}"`, {
      backend: ctx.backend,
    });
  return {
    result: toSnapshot(ctx.backend, made, { pluginId, name: spec.name, sourceVolume: spec.volume }),
    pending: null,
  };
}

/** `ref.scope` is the plugin that holds the snapshot. */
export async function deleteSnapshot(
  ctx: NomadContext,
  ref: SnapshotRef,
  opts: DeleteSnapshotOptions,
  o: CallOptions,
): Promise<Accepted<void>> {
  await req.deleteSnapshot(ctx.client, ref.scope, ref.nativeId, deleteInput(opts), o);
  return { result: undefined, pending: null };
}
