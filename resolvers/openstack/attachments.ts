/** Cinder's attachments API step by step, and Nova's attachment update. */
import { pageSize } from '../../adapters/contract/input';
import { pageOpaque } from '../../adapters/listing';
import type { MutationResolvers, QueryResolvers } from '../../schema/generated/resolvers-types';
import { idempotent } from '../../server/idempotency';
import { hostConnector, idArg } from '../args';
import { attachmentRefFromId, loadAttachment } from '../attachment';
import { connection } from '../connection';
import { track } from '../operation';
import { volumeRefFromId } from '../volume';
import { readBack, target } from '../volume-mutations';

export const hostAttachmentQueries: Pick<QueryResolvers, 'cinderHostAttachments'> = {
  cinderHostAttachments: async (_p, { backend, volumeId, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const hosts = ctx.registry.capable(b, 'hostAttachments');
    const ref = volumeId ? volumeRefFromId(ctx, volumeId, 'volumeId') : null;
    const call = ctx.call(b.id);
    const page = await pageOpaque((limit, token) => hosts.listHostAttachments(ref?.namespace ?? '', { volumeId: ref?.nativeId, limit, token }, call), pageSize(first, 50), after);
    return connection(page.edges, page.pageInfo);
  },
};

export const hostAttachmentMutations: Pick<MutationResolvers, 'reserveCinderVolumeHostAttachment' | 'updateCinderVolumeHostAttachment' | 'completeCinderVolumeHostAttachment' | 'updateNovaVolumeAttachment'> = {
  reserveCinderVolumeHostAttachment: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const b = ctx.registry.forId(ref.backend);
    const hosts = ctx.registry.capable(b, 'hostAttachments');
    const { idempotencyKey, ...fingerprinted } = input;
    const attachment = await idempotent(ctx.idempotency, { backend: b.id, credential: ctx.call(b.id).credential, mutation: 'reserveCinderVolumeHostAttachment' }, idempotencyKey, fingerprinted, () =>
      hosts.reserveHostAttachment(ref, ctx.call(ref.backend)),
    );
    return { attachment };
  },
  updateCinderVolumeHostAttachment: async (_p, { input }, ctx) => {
    const { volume, consumerId } = attachmentRefFromId(ctx, input.attachmentId, 'input.attachmentId');
    const hosts = ctx.registry.capable(ctx.registry.forId(volume.backend), 'hostAttachments');
    return { attachment: await hosts.updateHostAttachment(volume, consumerId, hostConnector(input.connector, 'input.connector'), ctx.call(volume.backend)) };
  },
  completeCinderVolumeHostAttachment: async (_p, { input }, ctx) => {
    const { volume, consumerId } = attachmentRefFromId(ctx, input.attachmentId, 'input.attachmentId');
    await ctx.registry.capable(ctx.registry.forId(volume.backend), 'hostAttachments').completeHostAttachment(volume, consumerId, ctx.call(volume.backend));
    ctx.loaders.volume.clear(volume);
    return { attachment: await loadAttachment(ctx, input.attachmentId, 'input.attachmentId') };
  },
  updateNovaVolumeAttachment: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const newRef = input.newVolumeId ? volumeRefFromId(ctx, input.newVolumeId, 'input.newVolumeId') : null;
    const b = ctx.registry.forId(ref.backend);
    const accepted = await ctx.registry.capable(b, 'serverAttachments').updateServerAttachment(idArg(b, 'server', input.serverId, 'input.serverId'), ref.nativeId, { newVolumeId: newRef?.nativeId, deleteOnTermination: input.deleteOnTermination ?? undefined }, ctx.call(ref.backend));
    const operation = await track(ctx, 'UPDATE_ATTACHMENT', target(ref), accepted);
    return { operation, volume: await readBack(ctx, ref) };
  },
};
