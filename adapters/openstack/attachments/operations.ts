/**
 * Attach and detach: to a server through Nova (as users do; the change finishes later and Nova's
 * request id goes into the rule, so the rule can read Nova's instance action for it), or to a
 * host through Cinder's attachments API (created with the connector and completed at once).
 */
import type { Accepted } from '../../contract/call-answers';
import type { AttachTarget, DetachTarget } from '../../contract/call-inputs';
import type { CallOptions } from '../../contract/call-options';
import { BadUserInputError, inputField } from '../../contract/errors';
import type { Attachment, VolumeRef } from '../../contract/model';
import * as cinder from '../cinder/attachment-requests';
import { rules } from '../completion/rules';
import { pending, type OpenStackContext } from '../context';
import { hostAttachmentId, readHostAttachment } from './hosts';
import { checkedUuid } from '../ids';
import * as nova from '../nova/requests';
import { toStartedAttachment } from '../nova/results';

export async function attachVolume(
  ctx: OpenStackContext,
  ref: VolumeRef,
  t: AttachTarget,
  o: CallOptions,
): Promise<Accepted<Attachment | null>> {
  const volumeId = checkedUuid(ref.nativeId, inputField('volumeId'));
  if (t.kind === 'server') {
    const target = { ...t, serverId: checkedUuid(t.serverId, inputField('target.server.serverId')) };
    const { data, requestId } = await nova.attachServerVolume(ctx.client, volumeId, target, o);
    // ≤ 2.100 Nova answers with the attachment it started; ≥ 2.101 with nothing.
    const started = data?.volumeAttachment
      ? toStartedAttachment(ctx.backend, ref.namespace, data.volumeAttachment)
      : null;
    return { result: started, pending: pending(ctx, rules.serverAttach(volumeId, target.serverId, requestId)) };
  }
  // Host attach: create with the connector (volume `attaching`), then complete (`in-use`).
  const { data } = await cinder.createAttachment(
    ctx.client,
    { volumeId, connector: t.connector, readOnly: t.readOnly },
    o,
  );
  const attachmentId = data!.attachment.id;
  await cinder.completeAttachment(ctx.client, attachmentId, o);
  return {
    result: await readHostAttachment(ctx, ref.namespace, attachmentId, o),
    pending: pending(ctx, rules.hostAttach(volumeId, attachmentId)),
  };
}

export async function detachVolume(
  ctx: OpenStackContext,
  ref: VolumeRef,
  t: DetachTarget,
  o: CallOptions,
): Promise<Accepted<void>> {
  const volumeId = checkedUuid(ref.nativeId, inputField('volumeId'));
  switch (t.kind) {
    case 'node':
      throw BadUserInputError.atField(
        'target.node',
        () => 'a node is a Nomad consumer; detach from a server or a host attachment',
      );
    case 'server': {
      const serverId = checkedUuid(t.serverId, inputField('target.server.serverId'));
      const { requestId } = await nova.detachServerVolume(ctx.client, serverId, volumeId, o);
      return { result: undefined, pending: pending(ctx, rules.serverDetach(volumeId, serverId, requestId)) };
    }
    case 'hostAttachment': {
      const attachmentId = await hostAttachmentId(
        ctx,
        volumeId,
        t.attachmentId,
        'detach',
        inputField('target.host.hostAttachmentId'),
        o,
      );
      await cinder.deleteAttachment(ctx.client, attachmentId, o);
      return { result: undefined, pending: pending(ctx, rules.hostDetach(volumeId, attachmentId)) };
    }
  }
}
