/** Snapshots: listing, reading, creating and deleting, and the VolumeSnapshot entity. */
import { BadUserInputError, OperationRecordGoneError } from '../adapters/contract/errors';
import { encodeGlobalId } from '../adapters/contract/ids';
import { pageSize, safeText } from '../adapters/contract/input';
import { pageOpaque } from '../adapters/listing';
import type { Snapshot } from '../adapters/contract/model';
import type { MutationResolvers, QueryResolvers, VolumeSnapshotResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { idempotent } from '../server/idempotency';
import { globalIdArg, optionalText, ownFields } from './args';
import { connection } from './connection';
import { loadOperation, operationId, track } from './operation';
import { volumeRefFromId } from './volume';

export const snapshotId = (s: { backend: string; scope: string; nativeId: string }): string => encodeGlobalId({ kind: 'Snapshot', backend: s.backend, scope: s.scope, nativeId: s.nativeId });

/** A snapshot by global id, through the execution's loader (UNSUPPORTED_BY_BACKEND where a backend cannot read one). */
export function loadSnapshot(ctx: GatewayContext, id: string, argument = 'id'): Promise<Snapshot | null> {
  const p = globalIdArg(ctx, id, 'Snapshot', argument);
  return ctx.loaders.snapshot.load({ backend: p.backend, scope: p.scope, nativeId: p.nativeId });
}

export const snapshotQueries: Pick<QueryResolvers, 'volumeSnapshots' | 'volumeSnapshot'> = {
  volumeSnapshots: async (_p, { backend, filter, first, after, secrets }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    // Some backends list snapshots per plugin, the others per scope (the caller's).
    if (b.snapshotsPerPlugin && !filter?.plugin) throw new BadUserInputError(`${b.snapshotsPerPlugin}: give filter.plugin`, 'filter.plugin');
    const volume = filter?.volumeId ? volumeRefFromId(ctx, filter.volumeId, 'filter.volumeId') : undefined;
    const own = { filter: filter && ownFields(filter, 'volumeId'), secrets };
    const page = await pageOpaque((limit, token) => b.listSnapshots({ volume, limit, token, own }, ctx.call(b.id)), pageSize(first, 50), after);
    return connection(page.edges, page.pageInfo);
  },
  volumeSnapshot: (_p, { id }, ctx) => loadSnapshot(ctx, id),
};

/** A remembered snapshot create: the snapshot as answered and its operation's id. */
interface Remembered {
  snapshot: Snapshot;
  operation: string;
}

export const snapshotMutations: Pick<MutationResolvers, 'createVolumeSnapshot' | 'deleteVolumeSnapshot'> = {
  createVolumeSnapshot: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(volume.backend);
    const spec = {
      volume,
      name: safeText(input.name, 'input.name', 256),
      description: optionalText(input.description, 'input.description'),
      own: ownFields(input, 'volumeId', 'name', 'description', 'idempotencyKey'),
    };
    const { idempotencyKey, ...fingerprinted } = input;
    const done = await idempotent<Remembered>(ctx.idempotency, { backend: b.id, credential: ctx.call(b.id).credential, mutation: 'createVolumeSnapshot' }, idempotencyKey, fingerprinted, async () => {
      const accepted = await b.createSnapshot(spec, ctx.call(b.id));
      const s = accepted.result;
      const operation = await track(ctx, 'CREATE_SNAPSHOT', { backend: b.id, scope: s.scope, id: snapshotId(s) }, accepted);
      return { snapshot: s, operation: operationId(operation) };
    });
    const operation = await loadOperation(ctx, done.operation);
    if (!operation) throw new OperationRecordGoneError('input.idempotencyKey', snapshotId(done.snapshot));
    return { snapshot: done.snapshot, operation };
  },
  deleteVolumeSnapshot: async (_p, { input }, ctx) => {
    const p = globalIdArg(ctx, input.id, 'Snapshot', 'input.id');
    const b = ctx.registry.forId(p.backend);
    const accepted = await b.deleteSnapshot({ backend: p.backend, scope: p.scope, nativeId: p.nativeId }, { own: ownFields(input, 'id') }, ctx.call(b.id));
    return { deletedId: input.id, operation: await track(ctx, 'DELETE_SNAPSHOT', { backend: b.id, scope: p.scope, id: input.id }, accepted) };
  },
};

export const snapshotType: VolumeSnapshotResolvers = {
  __resolveReference: (ref, ctx) => loadSnapshot(ctx, ref.id),
  id: (s) => snapshotId(s),
  backend: (s, _a, ctx) => ctx.registry.forId(s.backend),
  plugin: (s, _a, ctx) => (s.pluginId ? ctx.loaders.plugin.load({ backend: s.backend, nativeId: s.pluginId }) : null),
  volume: (s, _a, ctx) => (s.sourceVolume ? ctx.loaders.volume.load(s.sourceVolume) : null),
};
