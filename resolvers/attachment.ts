/**
 * Attachments, the consumer union and the server entity another subgraph owns. Each backend's own
 * consumer types and entities resolve in its folder (resolvers/<backend>/).
 */
import { NotFoundError } from '../adapters/contract/errors';
import { safeIdentifier } from '../adapters/contract/input';
import type { Attachment, VolumeRef } from '../adapters/contract/model';
import { attachmentId, attachmentOf, consumerId, memoized, requireVolume } from '../domain';
import type {
  QueryResolvers,
  ResolversTypes,
  ServerResolvers,
  VolumeAttachmentResolvers,
  VolumeConsumerResolvers,
} from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../domain/context';
import type { Merged } from '../adapters/listing';
import { globalIdArg } from './args';
import { mergedList, wholeList } from './connection';

/** An attachment's global id → its volume and consumer id. */
export function attachmentRefFromId(
  ctx: GatewayContext,
  id: string,
  argument: string,
): { volume: VolumeRef; consumerId: string } {
  const p = globalIdArg(ctx, id, 'Attachment', argument);
  if (p.subId === undefined) throw new NotFoundError(`${argument} names no consumer`);
  return { volume: { backend: p.backend, namespace: p.scope, nativeId: p.nativeId }, consumerId: p.subId };
}

/** An attachment by global id; null when the claim or attachment is gone. */
export async function loadAttachment(ctx: GatewayContext, id: string, argument = 'id'): Promise<Attachment | null> {
  const { volume, consumerId } = attachmentRefFromId(ctx, id, argument);
  return attachmentOf(ctx, volume, consumerId);
}

/** The entity key `id` of a server or node: an identifier, checked before any call. */
export const entityKey = (id: string, argument: string): string => safeIdentifier(id, argument);

/** A server's attachments across backends, merged (the `…List` fields) or whole (the deprecated lists). */
export const serverAttachments = (
  ctx: GatewayContext,
  serverId: string,
  argument: string,
): Promise<Merged<Attachment>> => ctx.loaders.serverAttachments.load(entityKey(serverId, argument));
/** A node's claims across backends, the same way. */
export const nodeClaims = (ctx: GatewayContext, nodeId: string, argument: string): Promise<Merged<Attachment>> =>
  ctx.loaders.nodeClaims.load(entityKey(nodeId, argument));

export const attachmentQueries: Pick<
  QueryResolvers,
  'volumeAttachment' | 'serverVolumeAttachments' | 'serverVolumeAttachmentList'
> = {
  volumeAttachment: (_p, { id }, ctx) => loadAttachment(ctx, id),
  serverVolumeAttachments: async (_p, { serverId }, ctx) =>
    wholeList(ctx, await serverAttachments(ctx, serverId, 'serverId')),
  serverVolumeAttachmentList: async (_p, { serverId }, ctx) =>
    mergedList(ctx, await serverAttachments(ctx, serverId, 'serverId')),
};

export const attachmentType: VolumeAttachmentResolvers = {
  __resolveReference: (ref, ctx) => loadAttachment(ctx, ref.id),
  id: (a) => attachmentId(a),
  volume: (a, _args, ctx) => requireVolume(ctx, a.volume),
  // Every consumer type's `id`, given here in neutral terms: the backend's consumer stays its own.
  // (The model types the consumer by its neutral part; it is the backend's own union member.)
  consumer: (a) => consumerOf(a) as unknown as ResolversTypes['VolumeConsumer'],
};

/**
 * Consumers with their ids, per attachment object: a backend that hands out the same attachments
 * (memory) gets the same answer objects, not a copy per request. The id comes before the spread:
 * fields added after a spread made V8 (Node 20) keep such objects through young-generation GCs.
 */
const consumerOf = memoized((a: Attachment): Attachment['consumer'] & { id: string } => ({
  id: consumerId(a),
  ...a.consumer,
}));

export const consumerType: VolumeConsumerResolvers = {
  __resolveType: (c) => c.__typename,
};

export const serverType: ServerResolvers = {
  __resolveReference: (ref) => ({ __typename: 'Server', id: ref.id }),
  volumeAttachments: async (s, _a, ctx) => wholeList(ctx, await serverAttachments(ctx, s.id, 'id')),
  volumeAttachmentList: async (s, _a, ctx) => mergedList(ctx, await serverAttachments(ctx, s.id, 'id')),
};
