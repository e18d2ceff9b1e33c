/** Attachments (Nomad claims) and their consumers. */
import { NotFoundError } from '../adapters/errors';
import { decodeGlobalId, encodeGlobalId } from '../adapters/ids';
import type { AttachmentConsumerResolvers, AttachmentResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import { requireVolume } from './volume';
import type { Attachment } from '../adapters/model';
import type { GatewayContext } from '../server/context';

/** An attachment by global id; null when the claim is gone. */
export async function loadAttachment(ctx: GatewayContext, id: string): Promise<Attachment | null> {
  const p = decodeGlobalId(id, 'Attachment');
  ctx.registry.forId(p.backend);
  if (p.subId === undefined) throw new NotFoundError('attachment id names no consumer');
  const v = await ctx.loaders.volume.load({ backend: p.backend, namespace: p.scope, nativeId: p.nativeId });
  return v?.detail?.attachments.find((a) => a.consumerId === p.subId) ?? null;
}

export const attachmentQueries: Pick<QueryResolvers, 'attachment'> = {
  attachment: (_p, { id }, ctx) => loadAttachment(ctx, id),
};

export const attachmentType: AttachmentResolvers = {
  id: (a) => encodeGlobalId({ kind: 'Attachment', backend: a.volume.backend, scope: a.volume.namespace, nativeId: a.volume.nativeId, subId: a.consumerId }),
  volume: (a, _args, ctx) => requireVolume(ctx, a.volume),
};

export const attachmentConsumerType: AttachmentConsumerResolvers = {
  __resolveType: (c) => c.kind,
};
