/**
 * Cinder's own volume actions, one typed mutation each (schema/openstack/cinder-actions.graphql).
 * Inputs are typed enums and objects; the adapter's action table turns each into its wire action.
 */
import type { CinderAction, CinderActionResult } from '../../adapters/openstack/actions/types';
import { BadUserInputError } from '../../adapters/contract/errors';
import { safeIdentifier, safeText } from '../../adapters/contract/input';
import type { OperationKind, Volume } from '../../adapters/contract/model';
import type { MutationResolvers, QueryResolvers } from '../../schema/generated/resolvers-types';
import type { GatewayContext } from '../../server/context';
import { globalIdArg, hostConnector, keyValues } from '../args';
import { track } from '../operation';
import { volumeRefFromId } from '../volume';
import { readBack, target } from '../volume-mutations';

/** Which actions continue on the backend, and as what kind of operation (the rest: VOLUME_ACTION). */
const KIND: Partial<Record<CinderAction['action'], OperationKind>> = {
  revertToSnapshot: 'REVERT_VOLUME',
  unmanage: 'UNMANAGE_VOLUME',
  retype: 'RETYPE_VOLUME',
  migrate: 'MIGRATE_VOLUME',
  forceDelete: 'DELETE_VOLUME',
  uploadToImage: 'UPLOAD_VOLUME_IMAGE',
  reimage: 'REIMAGE_VOLUME',
};

/** Runs one action: checked input → the adapter → a tracked operation and the volume read back. */
async function run(ctx: GatewayContext, id: string, action: CinderAction): Promise<{ volume: Volume | null; operation: Awaited<ReturnType<typeof track>>; result: CinderActionResult }> {
  const ref = volumeRefFromId(ctx, id, 'input.id');
  const accepted = await ctx.registry.capable(ctx.registry.forId(ref.backend), 'volumeActions').runVolumeAction(ref, action, ctx.call(ref.backend));
  const operation = await track(ctx, KIND[action.action] ?? 'VOLUME_ACTION', target(ref), accepted);
  return { volume: await readBack(ctx, ref), operation, result: accepted.result };
}

const plain = async (ctx: GatewayContext, id: string, action: CinderAction) => {
  const { volume, operation } = await run(ctx, id, action);
  return { volume, operation };
};

const text = (v: string | null | undefined, argument: string, max = 255): string | undefined => (v === null || v === undefined ? undefined : safeText(v, argument, max));
const id = (v: string | null | undefined, argument: string): string | undefined => (v === null || v === undefined ? undefined : safeIdentifier(v, argument));

export const cinderQueries: Pick<QueryResolvers, 'cinderVolumeImageMetadata'> = {
  cinderVolumeImageMetadata: async (_p, { id: vid }, ctx) => {
    const ref = volumeRefFromId(ctx, vid, 'id');
    return ctx.registry.capable(ctx.registry.forId(ref.backend), 'volumeActions').showImageMetadata(ref, ctx.call(ref.backend));
  },
};

export const cinderMutations: Pick<
  MutationResolvers,
  | 'resetCinderVolumeStatus' | 'completeCinderVolumeExtend' | 'revertCinderVolumeToSnapshot' | 'setCinderVolumeImageMetadata' | 'unsetCinderVolumeImageMetadata'
  | 'attachCinderVolumeLegacy' | 'detachCinderVolumeLegacy' | 'unmanageCinderVolume' | 'forceDetachCinderVolume' | 'retypeCinderVolume' | 'migrateCinderVolume'
  | 'completeCinderVolumeMigration' | 'forceDeleteCinderVolume' | 'setCinderVolumeBootable' | 'uploadCinderVolumeToImage' | 'reserveCinderVolume'
  | 'unreserveCinderVolume' | 'beginDetachingCinderVolume' | 'rollDetachingCinderVolume' | 'terminateCinderVolumeConnection'
  | 'initializeCinderVolumeConnection' | 'setCinderVolumeReadonly' | 'reimageCinderVolume'
> = {
  resetCinderVolumeStatus: (_p, { input }, ctx) => {
    const { status, attachStatus, migrationStatus } = input;
    if (status == null && attachStatus == null && migrationStatus == null) throw new BadUserInputError('give at least one of status, attachStatus and migrationStatus', 'input');
    if (status === 'DELETING' || status === 'OTHER') throw new BadUserInputError(`input.status ${status} cannot be set by a reset`, 'input.status');
    return plain(ctx, input.id, { action: 'resetStatus', status: status ?? undefined, attachStatus: attachStatus ?? undefined, migrationStatus: migrationStatus ?? undefined });
  },
  completeCinderVolumeExtend: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'completeExtend', error: input.error ?? false }),
  revertCinderVolumeToSnapshot: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'revertToSnapshot', snapshotId: globalIdArg(ctx, input.snapshotId, 'Snapshot', 'input.snapshotId').nativeId }),
  setCinderVolumeImageMetadata: async (_p, { input }, ctx) => {
    const metadata = keyValues(input.metadata, 'input.metadata');
    if (metadata.length === 0) throw new BadUserInputError('input.metadata is empty', 'input.metadata');
    const { volume, result } = await run(ctx, input.id, { action: 'setImageMetadata', metadata });
    return { volume, imageMetadata: result.imageMetadata ?? [] };
  },
  unsetCinderVolumeImageMetadata: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.id, 'input.id');
    const { volume } = await run(ctx, input.id, { action: 'unsetImageMetadata', key: safeText(input.key, 'input.key', 255) });
    const actions = ctx.registry.capable(ctx.registry.forId(ref.backend), 'volumeActions');
    return { volume, imageMetadata: await actions.showImageMetadata(ref, ctx.call(ref.backend)) };
  },
  attachCinderVolumeLegacy: (_p, { input }, ctx) =>
    plain(ctx, input.id, { action: 'legacyAttach', serverId: id(input.serverId, 'input.serverId'), hostName: text(input.hostName, 'input.hostName'), mountpoint: safeText(input.mountpoint, 'input.mountpoint', 255), readOnly: input.readOnly ?? false }),
  detachCinderVolumeLegacy: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'legacyDetach', attachmentId: id(input.attachmentId, 'input.attachmentId') }),
  unmanageCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'unmanage' }),
  forceDetachCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, input.id, { action: 'forceDetach', attachmentId: id(input.attachmentId, 'input.attachmentId'), connector: input.connector ? hostConnector(input.connector, 'input.connector') : undefined }),
  retypeCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'retype', newType: safeText(input.newType, 'input.newType', 255), onDemandMigration: input.migrationPolicy === 'ON_DEMAND' }),
  migrateCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, input.id, { action: 'migrate', host: text(input.host, 'input.host'), cluster: text(input.cluster, 'input.cluster'), forceHostCopy: input.forceHostCopy ?? undefined, lockVolume: input.lockVolume ?? undefined }),
  completeCinderVolumeMigration: async (_p, { input }, ctx) => {
    const { volume, result } = await run(ctx, input.id, { action: 'completeMigration', newVolumeId: safeIdentifier(input.newVolumeId, 'input.newVolumeId'), error: input.error ?? false });
    return { volume, savedVolumeId: result.savedVolumeId ?? '' };
  },
  forceDeleteCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'forceDelete' }),
  setCinderVolumeBootable: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'setBootable', bootable: input.bootable }),
  uploadCinderVolumeToImage: async (_p, { input }, ctx) => {
    const { volume, operation, result } = await run(ctx, input.id, {
      action: 'uploadToImage',
      imageName: safeText(input.imageName, 'input.imageName', 255),
      force: input.force ?? undefined,
      diskFormat: text(input.diskFormat, 'input.diskFormat', 32),
      containerFormat: text(input.containerFormat, 'input.containerFormat', 32),
      visibility: text(input.visibility, 'input.visibility', 32),
      protected: input.protected ?? undefined,
    });
    return { volume, operation, image: result.image ?? { id: '', name: input.imageName, diskFormat: null, containerFormat: null } };
  },
  reserveCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'reserve' }),
  unreserveCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'unreserve' }),
  beginDetachingCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'beginDetaching' }),
  rollDetachingCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'rollDetaching' }),
  terminateCinderVolumeConnection: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'terminateConnection', connector: input.connector ? hostConnector(input.connector, 'input.connector') : null }),
  initializeCinderVolumeConnection: async (_p, { input }, ctx) => {
    const { volume, result } = await run(ctx, input.id, { action: 'initializeConnection', connector: hostConnector(input.connector, 'input.connector') });
    return { volume, connectionInfo: result.connectionInfo ?? {} };
  },
  setCinderVolumeReadonly: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'setReadonly', readonly: input.readonly }),
  reimageCinderVolume: (_p, { input }, ctx) => plain(ctx, input.id, { action: 'reimage', imageId: safeIdentifier(input.imageId, 'input.imageId'), reimageReserved: input.reimageReserved ?? false }),
};
