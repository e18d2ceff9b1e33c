/**
 * Cinder's own volume actions, one typed mutation each (schema/cinder.graphql). Known rules are
 * checked here before any backend call; the adapter turns each into its wire action.
 */
import type { VolumeAction } from '../adapters/backend';
import { BadUserInputError } from '../adapters/errors';
import { safeIdentifier, safeText } from '../adapters/input';
import type { MutationResolvers, QueryResolvers, ResolversTypes } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import type { OperationKind } from '../subscriptions/operations';
import { globalIdArg, keyValues } from './args';
import { track } from './operation';
import { volumeId, volumeRefFromId } from './volume';
import { jsonObject } from './volume-mutations';

/** Cinder's volume statuses accepted by os-reset_status (backends.md 2.3; `deleting` is refused by Cinder). */
const RESET_STATUSES = new Set([
  'creating', 'available', 'error', 'error_deleting', 'error_managing', 'managing', 'attaching', 'in-use', 'detaching', 'maintenance',
  'restoring-backup', 'error_restoring', 'reserved', 'awaiting-transfer', 'backing-up', 'error_backing-up', 'error_extending',
  'downloading', 'uploading', 'retyping', 'extending',
]);
const RESET_ATTACH_STATUSES = new Set(['attached', 'detached']);
const MIGRATION_STATUSES = new Set(['migrating', 'error', 'success', 'completing', 'none', 'starting']);

/** Which actions continue on the backend, and as what kind of operation. */
const ASYNC_KIND: Partial<Record<VolumeAction['kind'], OperationKind>> = {
  revert: 'REVERT_VOLUME',
  'os-unmanage': 'UNMANAGE_VOLUME',
  'os-retype': 'RETYPE_VOLUME',
  'os-migrate_volume': 'MIGRATE_VOLUME',
  'os-force_delete': 'DELETE_VOLUME',
  'os-volume_upload_image': 'UPLOAD_VOLUME_IMAGE',
  'os-reimage': 'REIMAGE_VOLUME',
};

async function run(ctx: GatewayContext, id: string, action: VolumeAction): Promise<ResolversTypes['VolumeActionPayload']> {
  const ref = volumeRefFromId(ctx, id, 'input.id');
  const accepted = await ctx.registry.forId(ref.backend).volumeAction(ref, action, ctx.call(ref.backend));
  const kind = ASYNC_KIND[action.kind];
  const operation = kind ? await track(ctx, kind, { backend: ref.backend, scope: ref.namespace, id: volumeId(ref) }, accepted) : null;
  ctx.loaders.volume.clear(ref);
  const volume = await ctx.loaders.volume.load(ref).catch(() => null);
  const r = accepted.result;
  return { volume, operation, imageMetadata: r.imageMetadata ?? null, connectionInfo: r.connectionInfo ?? null, savedVolumeId: r.savedVolumeId ?? null, image: r.image ?? null };
}

const text = (v: string | null | undefined, argument: string, max = 255): string | undefined => (v === null || v === undefined ? undefined : safeText(v, argument, max));
const id = (v: string | null | undefined, argument: string): string | undefined => (v === null || v === undefined ? undefined : safeIdentifier(v, argument));
const connector = (v: unknown, argument: string): Record<string, unknown> | undefined => (v === null || v === undefined ? undefined : jsonObject(v, argument));

export const cinderQueries: Pick<QueryResolvers, 'volumeImageMetadata'> = {
  volumeImageMetadata: async (_p, { id: vid }, ctx) => {
    const ref = volumeRefFromId(ctx, vid, 'id');
    const { result } = await ctx.registry.forId(ref.backend).volumeAction(ref, { kind: 'os-show_image_metadata' }, ctx.call(ref.backend));
    return result.imageMetadata ?? [];
  },
};

export const cinderMutations: Pick<
  MutationResolvers,
  | 'resetVolumeStatus' | 'completeVolumeExtend' | 'revertVolumeToSnapshot' | 'setVolumeImageMetadata' | 'unsetVolumeImageMetadata'
  | 'legacyAttachVolume' | 'legacyDetachVolume' | 'unmanageVolume' | 'forceDetachVolume' | 'retypeVolume' | 'migrateVolume'
  | 'completeVolumeMigration' | 'forceDeleteVolume' | 'setVolumeBootable' | 'uploadVolumeToImage' | 'reserveVolume' | 'unreserveVolume'
  | 'beginDetachingVolume' | 'rollDetachingVolume' | 'terminateVolumeConnection' | 'initializeVolumeConnection' | 'setVolumeReadonly' | 'reimageVolume'
> = {
  resetVolumeStatus: (_p, { input }, ctx) => {
    const { status, attachStatus, migrationStatus } = input;
    if (status == null && attachStatus == null && migrationStatus == null) throw new BadUserInputError('give at least one of status, attachStatus and migrationStatus', 'input');
    if (status != null && !RESET_STATUSES.has(status)) throw new BadUserInputError(`input.status ${JSON.stringify(status.slice(0, 40))} is not a Cinder volume status a reset may set (one of: ${[...RESET_STATUSES].join(', ')})`, 'input.status');
    if (attachStatus != null && !RESET_ATTACH_STATUSES.has(attachStatus)) throw new BadUserInputError('input.attachStatus must be "attached" or "detached"', 'input.attachStatus');
    if (migrationStatus != null && !MIGRATION_STATUSES.has(migrationStatus)) throw new BadUserInputError(`input.migrationStatus must be one of: ${[...MIGRATION_STATUSES].join(', ')}`, 'input.migrationStatus');
    return run(ctx, input.id, { kind: 'os-reset_status', status: status ?? undefined, attachStatus: attachStatus ?? undefined, migrationStatus: migrationStatus ?? undefined });
  },
  completeVolumeExtend: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-extend_volume_completion', error: input.error ?? false }),
  revertVolumeToSnapshot: (_p, { input }, ctx) => {
    const snap = globalIdArg(ctx, input.snapshotId, 'Snapshot', 'input.snapshotId');
    return run(ctx, input.id, { kind: 'revert', snapshotId: snap.nativeId });
  },
  setVolumeImageMetadata: (_p, { input }, ctx) => {
    const metadata = keyValues(input.metadata, 'input.metadata');
    if (metadata.length === 0) throw new BadUserInputError('input.metadata is empty', 'input.metadata');
    return run(ctx, input.id, { kind: 'os-set_image_metadata', metadata });
  },
  unsetVolumeImageMetadata: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-unset_image_metadata', key: safeText(input.key, 'input.key', 255) }),
  legacyAttachVolume: (_p, { input }, ctx) =>
    run(ctx, input.id, { kind: 'os-attach', serverId: id(input.serverId, 'input.serverId'), hostName: text(input.hostName, 'input.hostName'), mountpoint: safeText(input.mountpoint, 'input.mountpoint', 255), readOnly: input.readOnly ?? false }),
  legacyDetachVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-detach', attachmentId: id(input.attachmentId, 'input.attachmentId') }),
  unmanageVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-unmanage' }),
  forceDetachVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-force_detach', attachmentId: id(input.attachmentId, 'input.attachmentId'), connector: connector(input.connector, 'input.connector') }),
  retypeVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-retype', newType: safeText(input.newType, 'input.newType', 255), onDemandMigration: input.migrationPolicy === 'ON_DEMAND' }),
  migrateVolume: (_p, { input }, ctx) =>
    run(ctx, input.id, { kind: 'os-migrate_volume', host: text(input.host, 'input.host'), cluster: text(input.cluster, 'input.cluster'), forceHostCopy: input.forceHostCopy ?? undefined, lockVolume: input.lockVolume ?? undefined }),
  completeVolumeMigration: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-migrate_volume_completion', newVolumeId: safeIdentifier(input.newVolumeId, 'input.newVolumeId'), error: input.error ?? false }),
  forceDeleteVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-force_delete' }),
  setVolumeBootable: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-set_bootable', bootable: input.bootable }),
  uploadVolumeToImage: (_p, { input }, ctx) =>
    run(ctx, input.id, {
      kind: 'os-volume_upload_image',
      imageName: safeText(input.imageName, 'input.imageName', 255),
      force: input.force ?? undefined,
      diskFormat: text(input.diskFormat, 'input.diskFormat', 32),
      containerFormat: text(input.containerFormat, 'input.containerFormat', 32),
      visibility: text(input.visibility, 'input.visibility', 32),
      protected: input.protected ?? undefined,
    }),
  reserveVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-reserve' }),
  unreserveVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-unreserve' }),
  beginDetachingVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-begin_detaching' }),
  rollDetachingVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-roll_detaching' }),
  terminateVolumeConnection: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-terminate_connection', connector: connector(input.connector, 'input.connector') ?? null }),
  initializeVolumeConnection: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-initialize_connection', connector: jsonObject(input.connector, 'input.connector') }),
  setVolumeReadonly: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-update_readonly_flag', readonly: input.readonly }),
  reimageVolume: (_p, { input }, ctx) => run(ctx, input.id, { kind: 'os-reimage', imageId: safeIdentifier(input.imageId, 'input.imageId'), reimageReserved: input.reimageReserved ?? false }),
};
