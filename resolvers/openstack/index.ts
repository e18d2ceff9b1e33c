/** Everything the schema's OpenStack part resolves: Cinder's actions and host attachments, Nova's attachment update, the server consumer. */
import type { Resolvers } from '../../schema/generated/resolvers-types';
import { hostAttachmentMutations, hostAttachmentQueries } from './attachments';
import { cinderMutations, cinderQueries } from './cinder-actions';
import { serverConsumerType } from './consumers';

export const openstackResolvers: Resolvers = {
  Query: { ...cinderQueries, ...hostAttachmentQueries },
  Mutation: { ...cinderMutations, ...hostAttachmentMutations },
  VolumeServerConsumer: serverConsumerType,
};
