/** Cinder's attachments API step by step, and Nova's attachment update (domain/host-attachments.ts, domain/attachments.ts). */
import { pageSize } from '../../adapters/contract/input';
import { pageOpaque } from '../../adapters/listing';
import {
  completeHostAttachment,
  reserveHostAttachment,
  updateHostAttachment,
  updateServerAttachment,
} from '../../domain';
import type { MutationResolvers, QueryResolvers } from '../../schema/generated/resolvers-types';
import { hostConnector, idArg } from '../args';
import { attachmentRefFromId } from '../attachment';
import { connection } from '../connection';
import { idempotencyArg } from '../idempotency';
import { volumeRefFromId } from '../volume';

export const hostAttachmentQueries: Pick<QueryResolvers, 'cinderHostAttachments'> = {
  cinderHostAttachments: async (_p, { backend, volumeId, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const hosts = ctx.registry.capable(b, 'hostAttachments');
    const ref = volumeId ? volumeRefFromId(ctx, volumeId, 'volumeId') : null;
    const call = ctx.call(b.id);
    const page = await pageOpaque(
      (limit, token) =>
        hosts.listHostAttachments(ref?.namespace ?? '', { volumeId: ref?.nativeId, limit, token }, call),
      pageSize(first, 50),
      after,
    );
    return connection(page.edges, page.pageInfo);
  },
};

export const hostAttachmentMutations: Pick<
  MutationResolvers,
  | 'reserveCinderVolumeHostAttachment'
  | 'updateCinderVolumeHostAttachment'
  | 'completeCinderVolumeHostAttachment'
  | 'updateNovaVolumeAttachment'
> = {
  reserveCinderVolumeHostAttachment: async (_p, { input }, ctx) =>
    reserveHostAttachment(ctx, {
      volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'),
      idempotency: idempotencyArg('reserveCinderVolumeHostAttachment', input),
    }),
  updateCinderVolumeHostAttachment: async (_p, { input }, ctx) =>
    updateHostAttachment(ctx, {
      attachment: attachmentRefFromId(ctx, input.attachmentId, 'input.attachmentId'),
      connector: () => hostConnector(input.connector, 'input.connector'),
      idempotency: idempotencyArg('updateCinderVolumeHostAttachment', input),
    }),
  completeCinderVolumeHostAttachment: async (_p, { input }, ctx) =>
    completeHostAttachment(ctx, {
      attachment: attachmentRefFromId(ctx, input.attachmentId, 'input.attachmentId'),
      idempotency: idempotencyArg('completeCinderVolumeHostAttachment', input),
    }),
  updateNovaVolumeAttachment: async (_p, { input }, ctx) =>
    updateServerAttachment(ctx, {
      volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'),
      newVolume: input.newVolumeId ? volumeRefFromId(ctx, input.newVolumeId, 'input.newVolumeId') : null,
      serverId: (b) => idArg(b, 'server', input.serverId, 'input.serverId'),
      deleteOnTermination: input.deleteOnTermination ?? undefined,
      idempotency: idempotencyArg('updateNovaVolumeAttachment', input),
    }),
};
