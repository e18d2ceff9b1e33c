/** Attachments (Nomad claims, OpenStack server and host attachments) and their consumers. */
import { NotFoundError } from '../adapters/errors';
import { encodeGlobalId } from '../adapters/ids';
import { pageSize } from '../adapters/input';
import { pageOpaque } from '../adapters/listing';
import type { Attachment } from '../adapters/model';
import type { AttachmentConsumerResolvers, AttachmentResolvers, MutationResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { globalIdArg, idArg } from './args';
import { connection } from './connection';
import { track } from './operation';
import type { ServerRef } from './server-ref';
import { jsonObject } from './volume-mutations';
import { requireVolume, volumeId, volumeRefFromId } from './volume';

/** An attachment by global id; null when the claim or attachment is gone. */
export async function loadAttachment(ctx: GatewayContext, id: string): Promise<Attachment | null> {
  const p = globalIdArg(ctx, id, 'Attachment');
  if (p.subId === undefined) throw new NotFoundError('attachment id names no consumer');
  const v = await ctx.loaders.volume.load({ backend: p.backend, namespace: p.scope, nativeId: p.nativeId });
  return v?.detail?.attachments.find((a) => a.consumerId === p.subId) ?? null;
}

export const attachmentId = (a: Attachment): string =>
  encodeGlobalId({ kind: 'Attachment', backend: a.volume.backend, scope: a.volume.namespace, nativeId: a.volume.nativeId, subId: a.consumerId });

/** A host attachment's volume ref from its global id. */
function hostAttachmentRef(ctx: GatewayContext, id: string, argument: string): { ref: { backend: string; namespace: string; nativeId: string }; attachmentId: string } {
  const p = globalIdArg(ctx, id, 'Attachment', argument);
  if (p.subId === undefined) throw new NotFoundError(`${argument} names no attachment`);
  return { ref: { backend: p.backend, namespace: p.scope, nativeId: p.nativeId }, attachmentId: p.subId };
}

export const attachmentQueries: Pick<QueryResolvers, 'attachment' | 'hostAttachments'> = {
  attachment: (_p, { id }, ctx) => loadAttachment(ctx, id),
  hostAttachments: async (_p, { backend, volumeId: vid, first, after }, ctx) => {
    const b = ctx.registry.forArgument(backend, 'backend');
    const ref = vid ? volumeRefFromId(ctx, vid, 'volumeId') : null;
    const session = ctx.call(b.id);
    const size = pageSize(first, 50);
    const page = await pageOpaque((limit, token) => b.listHostAttachments(ref?.namespace ?? '', { volumeId: ref?.nativeId, limit, token }, session), size, after);
    return connection(page.edges, page.pageInfo);
  },
};

export const attachmentMutations: Pick<MutationResolvers, 'reserveHostAttachment' | 'updateHostAttachment' | 'completeHostAttachment' | 'updateServerVolumeAttachment'> = {
  reserveHostAttachment: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    return { attachment: await ctx.registry.forId(ref.backend).reserveHostAttachment(ref, ctx.call(ref.backend)) };
  },
  updateHostAttachment: async (_p, { input }, ctx) => {
    const { ref, attachmentId: aid } = hostAttachmentRef(ctx, input.attachmentId, 'input.attachmentId');
    const attachment = await ctx.registry.forId(ref.backend).updateHostAttachment(ref, aid, jsonObject(input.connector, 'input.connector'), ctx.call(ref.backend));
    return { attachment };
  },
  completeHostAttachment: async (_p, { input }, ctx) => {
    const { ref, attachmentId: aid } = hostAttachmentRef(ctx, input.attachmentId, 'input.attachmentId');
    await ctx.registry.forId(ref.backend).completeHostAttachment(ref, aid, ctx.call(ref.backend));
    return { attachment: await loadAttachment(ctx, input.attachmentId) };
  },
  updateServerVolumeAttachment: async (_p, { input }, ctx) => {
    const ref = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    const newRef = input.newVolumeId ? volumeRefFromId(ctx, input.newVolumeId, 'input.newVolumeId') : null;
    const b = ctx.registry.forId(ref.backend);
    const accepted = await b
      .updateServerVolumeAttachment(ref.namespace, idArg(b, 'server', input.serverId, 'input.serverId'), ref.nativeId, { newVolumeId: newRef?.nativeId, deleteOnTermination: input.deleteOnTermination ?? undefined }, ctx.call(ref.backend));
    const operation = await track(ctx, 'UPDATE_ATTACHMENT', { backend: ref.backend, scope: ref.namespace, id: volumeId(ref) }, accepted);
    return { operation, volume: await ctx.loaders.volume.load(ref).catch(() => null) };
  },
};

export const attachmentType: AttachmentResolvers = {
  id: (a) => attachmentId(a),
  volume: (a, _args, ctx) => requireVolume(ctx, a.volume),
  // A server consumer becomes a ServerRef, so its name and state load through the server loader.
  consumer: (a) => (a.consumer.kind === 'OpenStackServer' ? ({ kind: 'OpenStackServer', backend: a.volume.backend, scope: a.volume.namespace, id: a.consumer.id } satisfies ServerRef) : a.consumer),
  device: (a) => a.placement?.device ?? null,
  attachedAt: (a) => a.placement?.attachedAt ?? null,
  nativeId: (a) => (a.consumer.kind === 'NomadAllocation' ? null : a.consumerId),
};

export const attachmentConsumerType: AttachmentConsumerResolvers = {
  __resolveType: (c) => c.kind,
};
