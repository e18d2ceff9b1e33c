/** Snapshots: listing, reading, creating and deleting, and the VolumeSnapshot entity. */
import { BadUserInputError } from '../adapters/contract/errors';
import { pageSize, safeText } from '../adapters/contract/input';
import type { Snapshot } from '../adapters/contract/model';
import { createSnapshot, deleteSnapshot, listSnapshots, snapshotId } from '../domain';
import type { MutationResolvers, QueryResolvers, VolumeSnapshotResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../domain/context';
import { globalIdArg, optionalText, ownFields } from './args';
import { connection } from './connection';
import { idempotencyArg } from './idempotency';
import { volumeRefFromId } from './volume';

/** A snapshot by global id, through the execution's loader (UNSUPPORTED_BY_BACKEND where a backend cannot read one). */
export function loadSnapshot(ctx: GatewayContext, id: string, argument = 'id'): Promise<Snapshot | null> {
  const p = globalIdArg(ctx, id, 'Snapshot', argument);
  return ctx.loaders.snapshot.load({ backend: p.backend, scope: p.scope, nativeId: p.nativeId });
}

export const snapshotQueries: Pick<QueryResolvers, 'volumeSnapshots' | 'volumeSnapshot'> = {
  volumeSnapshots: async (_p, { backend, filter, first, after, secrets }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    // Some backends list snapshots per plugin, the others per scope (the caller's).
    if (b.snapshotsPerPlugin && !filter?.plugin)
      throw new BadUserInputError(`${b.snapshotsPerPlugin}: give filter.plugin`, 'filter.plugin');
    const volume = filter?.volumeId ? volumeRefFromId(ctx, filter.volumeId, 'filter.volumeId') : undefined;
    const page = await listSnapshots(ctx, {
      backend: b.id,
      query: { volume, own: { filter: filter && ownFields(filter, 'volumeId'), secrets } },
      first: pageSize(first, 50),
      after,
    });
    return connection(page.edges, page.pageInfo);
  },
  volumeSnapshot: (_p, { id }, ctx) => loadSnapshot(ctx, id),
};

export const snapshotMutations: Pick<MutationResolvers, 'createVolumeSnapshot' | 'deleteVolumeSnapshot'> = {
  createVolumeSnapshot: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const spec = {
      volume,
      name: safeText(input.name, 'input.name', 256),
      description: optionalText(input.description, 'input.description'),
      own: ownFields(input, 'volumeId', 'name', 'description', 'idempotencyKey'),
    };
    return createSnapshot(ctx, { spec, idempotency: idempotencyArg('createVolumeSnapshot', input) });
  },
  deleteVolumeSnapshot: async (_p, { input }, ctx) => {
    const p = globalIdArg(ctx, input.snapshotId, 'Snapshot', 'input.snapshotId');
    return deleteSnapshot(ctx, {
      id: input.snapshotId,
      snapshot: { backend: p.backend, scope: p.scope, nativeId: p.nativeId },
      options: { own: ownFields(input, 'snapshotId', 'idempotencyKey') },
      idempotency: idempotencyArg('deleteVolumeSnapshot', input),
    });
  },
};

export const snapshotType: VolumeSnapshotResolvers = {
  __resolveReference: (ref, ctx) => loadSnapshot(ctx, ref.id),
  id: (s) => snapshotId(s),
  backend: (s, _a, ctx) => ctx.registry.forId(s.backend),
  plugin: (s, _a, ctx) => (s.pluginId ? ctx.loaders.plugin.load({ backend: s.backend, nativeId: s.pluginId }) : null),
  volume: (s, _a, ctx) => (s.sourceVolume ? ctx.loaders.volume.load(s.sourceVolume) : null),
};
