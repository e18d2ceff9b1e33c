/**
 * Cinder's own volume actions, one typed mutation each (schema/openstack/cinder-actions.graphql).
 * Inputs are typed enums and objects; the adapter's action table turns each into its wire action.
 * Each mutation maps its input to one action and runs it through the domain's volume-action use
 * case (domain/volume-actions.ts), which tracks it and reads the volume back.
 */
import type { CinderAction } from '../../adapters/openstack/actions/types';
import { BadUserInputError } from '../../adapters/contract/errors';
import { safeIdentifier, safeText } from '../../adapters/contract/input';
import type { OperationKind } from '../../adapters/contract/model';
import { runVolumeAction, volumeImageMetadata } from '../../domain';
import type { MutationResolvers, QueryResolvers } from '../../schema/generated/resolvers-types';
import type { GatewayContext } from '../../domain/context';
import { globalIdArg, hostConnector, keyValues } from '../args';
import { idempotencyArg } from '../idempotency';
import { volumeRefFromId } from '../volume';

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

/** What every action's input has: the volume and (except where the result carries secrets) an idempotency key. */
interface ActionInput {
  volumeId: string;
  idempotencyKey?: string | null;
}

/** Runs one checked action on the input's volume, once per idempotency key of the mutation's name. */
const run = (
  ctx: GatewayContext,
  mutation: string,
  input: ActionInput,
  action: CinderAction,
  readImageMetadata = false,
) =>
  runVolumeAction(ctx, {
    action,
    volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'),
    operationKind: KIND[action.action],
    readImageMetadata,
    // initializeCinderVolumeConnection's input has no key: its result (connection info) is never stored.
    idempotency: idempotencyArg(mutation, input),
  });

const plain = async (ctx: GatewayContext, mutation: string, input: ActionInput, action: CinderAction) => {
  const { volume, operation } = await run(ctx, mutation, input, action);
  return { volume, operation };
};

const text = (v: string | null | undefined, argument: string, max = 255): string | undefined =>
  v === null || v === undefined ? undefined : safeText(v, argument, max);
const id = (v: string | null | undefined, argument: string): string | undefined =>
  v === null || v === undefined ? undefined : safeIdentifier(v, argument);

export const cinderQueries: Pick<QueryResolvers, 'cinderVolumeImageMetadata'> = {
  cinderVolumeImageMetadata: async (_p, { id: vid }, ctx) => volumeImageMetadata(ctx, volumeRefFromId(ctx, vid, 'id')),
};

export const cinderMutations: Pick<
  MutationResolvers,
  | 'resetCinderVolumeStatus'
  | 'completeCinderVolumeExtend'
  | 'revertCinderVolumeToSnapshot'
  | 'setCinderVolumeImageMetadata'
  | 'unsetCinderVolumeImageMetadata'
  | 'attachCinderVolumeLegacy'
  | 'detachCinderVolumeLegacy'
  | 'unmanageCinderVolume'
  | 'forceDetachCinderVolume'
  | 'retypeCinderVolume'
  | 'migrateCinderVolume'
  | 'completeCinderVolumeMigration'
  | 'forceDeleteCinderVolume'
  | 'setCinderVolumeBootable'
  | 'uploadCinderVolumeToImage'
  | 'reserveCinderVolume'
  | 'unreserveCinderVolume'
  | 'beginDetachingCinderVolume'
  | 'rollDetachingCinderVolume'
  | 'terminateCinderVolumeConnection'
  | 'initializeCinderVolumeConnection'
  | 'setCinderVolumeReadonly'
  | 'reimageCinderVolume'
> = {
  resetCinderVolumeStatus: (_p, { input }, ctx) => {
    const { status, attachStatus, migrationStatus } = input;
    if (status == null && attachStatus == null && migrationStatus == null)
      throw new BadUserInputError('give at least one of status, attachStatus and migrationStatus', 'input');
    if (status === 'DELETING' || status === 'OTHER')
      throw new BadUserInputError(`input.status ${status} cannot be set by a reset`, 'input.status');
    return plain(ctx, 'resetCinderVolumeStatus', input, {
      action: 'resetStatus',
      status: status ?? undefined,
      attachStatus: attachStatus ?? undefined,
      migrationStatus: migrationStatus ?? undefined,
    });
  },
  completeCinderVolumeExtend: (_p, { input }, ctx) =>
    plain(ctx, 'completeCinderVolumeExtend', input, { action: 'completeExtend', error: input.error ?? false }),
  revertCinderVolumeToSnapshot: (_p, { input }, ctx) =>
    plain(ctx, 'revertCinderVolumeToSnapshot', input, {
      action: 'revertToSnapshot',
      snapshotId: globalIdArg(ctx, input.snapshotId, 'Snapshot', 'input.snapshotId').nativeId,
    }),
  setCinderVolumeImageMetadata: async (_p, { input }, ctx) => {
    const metadata = keyValues(input.metadata, 'input.metadata');
    if (metadata.length === 0) throw new BadUserInputError('input.metadata is empty', 'input.metadata');
    const { volume, result } = await run(ctx, 'setCinderVolumeImageMetadata', input, {
      action: 'setImageMetadata',
      metadata,
    });
    return { volume, imageMetadata: result.imageMetadata ?? [] };
  },
  unsetCinderVolumeImageMetadata: async (_p, { input }, ctx) => {
    const action: CinderAction = { action: 'unsetImageMetadata', key: safeText(input.key, 'input.key', 255) };
    // Cinder answers an unset with nothing: the metadata left is read after it.
    const done = await run(ctx, 'unsetCinderVolumeImageMetadata', input, action, true);
    return { volume: done.volume, imageMetadata: done.imageMetadata ?? [] };
  },
  attachCinderVolumeLegacy: (_p, { input }, ctx) =>
    plain(ctx, 'attachCinderVolumeLegacy', input, {
      action: 'legacyAttach',
      serverId: id(input.serverId, 'input.serverId'),
      hostName: text(input.hostName, 'input.hostName'),
      mountpoint: safeText(input.mountpoint, 'input.mountpoint', 255),
      readOnly: input.readOnly ?? false,
    }),
  detachCinderVolumeLegacy: (_p, { input }, ctx) =>
    plain(ctx, 'detachCinderVolumeLegacy', input, {
      action: 'legacyDetach',
      attachmentId: id(input.attachmentId, 'input.attachmentId'),
    }),
  unmanageCinderVolume: (_p, { input }, ctx) => plain(ctx, 'unmanageCinderVolume', input, { action: 'unmanage' }),
  forceDetachCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'forceDetachCinderVolume', input, {
      action: 'forceDetach',
      attachmentId: id(input.attachmentId, 'input.attachmentId'),
      connector: input.connector ? hostConnector(input.connector, 'input.connector') : undefined,
    }),
  retypeCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'retypeCinderVolume', input, {
      action: 'retype',
      newType: safeText(input.newType, 'input.newType', 255),
      onDemandMigration: input.migrationPolicy === 'ON_DEMAND',
    }),
  migrateCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'migrateCinderVolume', input, {
      action: 'migrate',
      host: text(input.host, 'input.host'),
      cluster: text(input.cluster, 'input.cluster'),
      forceHostCopy: input.forceHostCopy ?? undefined,
      lockVolume: input.lockVolume ?? undefined,
    }),
  completeCinderVolumeMigration: async (_p, { input }, ctx) => {
    const { volume, result } = await run(ctx, 'completeCinderVolumeMigration', input, {
      action: 'completeMigration',
      newVolumeId: safeIdentifier(input.newVolumeId, 'input.newVolumeId'),
      error: input.error ?? false,
    });
    return { volume, savedVolumeId: result.savedVolumeId ?? '' };
  },
  forceDeleteCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'forceDeleteCinderVolume', input, { action: 'forceDelete' }),
  setCinderVolumeBootable: (_p, { input }, ctx) =>
    plain(ctx, 'setCinderVolumeBootable', input, { action: 'setBootable', bootable: input.bootable }),
  uploadCinderVolumeToImage: async (_p, { input }, ctx) => {
    const { volume, operation, result } = await run(ctx, 'uploadCinderVolumeToImage', input, {
      action: 'uploadToImage',
      imageName: safeText(input.imageName, 'input.imageName', 255),
      force: input.force ?? undefined,
      diskFormat: text(input.diskFormat, 'input.diskFormat', 32),
      containerFormat: text(input.containerFormat, 'input.containerFormat', 32),
      visibility: text(input.visibility, 'input.visibility', 32),
      protected: input.protected ?? undefined,
    });
    return {
      volume,
      operation,
      image: result.image ?? { id: '', name: input.imageName, diskFormat: null, containerFormat: null },
    };
  },
  reserveCinderVolume: (_p, { input }, ctx) => plain(ctx, 'reserveCinderVolume', input, { action: 'reserve' }),
  unreserveCinderVolume: (_p, { input }, ctx) => plain(ctx, 'unreserveCinderVolume', input, { action: 'unreserve' }),
  beginDetachingCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'beginDetachingCinderVolume', input, { action: 'beginDetaching' }),
  rollDetachingCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'rollDetachingCinderVolume', input, { action: 'rollDetaching' }),
  terminateCinderVolumeConnection: (_p, { input }, ctx) =>
    plain(ctx, 'terminateCinderVolumeConnection', input, {
      action: 'terminateConnection',
      connector: input.connector ? hostConnector(input.connector, 'input.connector') : null,
    }),
  initializeCinderVolumeConnection: async (_p, { input }, ctx) => {
    const { volume, result } = await run(ctx, 'initializeCinderVolumeConnection', input, {
      action: 'initializeConnection',
      connector: hostConnector(input.connector, 'input.connector'),
    });
    return { volume, connectionInfo: result.connectionInfo ?? {} };
  },
  setCinderVolumeReadonly: (_p, { input }, ctx) =>
    plain(ctx, 'setCinderVolumeReadonly', input, { action: 'setReadonly', readonly: input.readonly }),
  reimageCinderVolume: (_p, { input }, ctx) =>
    plain(ctx, 'reimageCinderVolume', input, {
      action: 'reimage',
      imageId: safeIdentifier(input.imageId, 'input.imageId'),
      reimageReserved: input.reimageReserved ?? false,
    }),
};
