/**
 * Nova servers and their volume attachments. Nova's attachment list is checked against Cinder's
 * view of each volume (read with the batch strategy), so an attachment the two services disagree
 * on shows as ERROR with the reason instead of a confident ATTACHED.
 */
import type { Accepted } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { VolumeReader } from '../../contract/capabilities';
import { mapWithConcurrency } from '../../http/concurrency';
import { BadUserInputError, inputField } from '../../contract/errors';
import type { Attachment, Volume } from '../../contract/model';
import { getVolumes, SHOW_CONCURRENCY } from '../volumes/batch';
import { rules } from '../completion/rules';
import { orNull, pending, type OpenStackContext } from '../context';
import { checkedUuid, UUID } from '../ids';
import * as nova from '../nova/requests';
import { attachedVolumeIds, toServerAttachment, type NovaVolumeAttachment } from '../nova/results';

/** A server's volume attachments as Nova lists them; null when the server is gone (404), and its attachments with it. */
export async function listServerAttachments(
  ctx: OpenStackContext,
  serverId: string,
  o: CallOptions,
): Promise<NovaVolumeAttachment[] | null> {
  const r = await orNull(nova.listServerVolumeAttachments(ctx.client, serverId, o));
  return r ? (r.data?.volumeAttachments ?? []) : null;
}

export async function serverAttachments(
  ctx: OpenStackContext,
  serverIds: readonly string[],
  o: CallOptions,
  readVolumes: VolumeReader = (refs) => getVolumes(ctx, refs, o, SHOW_CONCURRENCY),
): Promise<Map<string, Attachment[]>> {
  const { projectId } = await ctx.client.session(o);
  const asked = [...new Set(serverIds)];
  const lists = await mapWithConcurrency(asked, SHOW_CONCURRENCY, async (id) =>
    UUID.test(id) ? ((await listServerAttachments(ctx, id.toLowerCase(), o)) ?? []) : [],
  );
  const volumeIds = [...new Set(attachedVolumeIds(lists.flat()))];
  const read = await readVolumes(
    volumeIds.map((nativeId) => ({ backend: ctx.backend, namespace: projectId, nativeId })),
  );
  const volumes = new Map<string, Volume | null>();
  read.forEach((v, i) => {
    if (v instanceof Error) throw v;
    volumes.set(volumeIds[i]!, v);
  });
  const out = new Map<string, Attachment[]>();
  asked.forEach((id, i) =>
    out.set(
      id,
      lists[i]!.map((a) =>
        toServerAttachment(ctx.backend, projectId, a, volumes.get(a.volumeId.toLowerCase()) ?? null),
      ),
    ),
  );
  for (const id of serverIds) if (!out.has(id)) out.set(id, []);
  return out;
}

export async function updateServerAttachment(
  ctx: OpenStackContext,
  serverId: string,
  volumeId: string,
  change: { newVolumeId?: string; deleteOnTermination?: boolean },
  o: CallOptions,
): Promise<Accepted<void>> {
  const sid = checkedUuid(serverId, inputField('serverId'));
  const vid = checkedUuid(volumeId, inputField('volumeId'));
  const newVolumeId =
    change.newVolumeId === undefined ? undefined : checkedUuid(change.newVolumeId, inputField('newVolumeId'));
  const swap = newVolumeId !== undefined && newVolumeId !== vid;
  if (!swap && change.deleteOnTermination === undefined)
    throw BadUserInputError.atField('', () => 'nothing to change: give newVolumeId (swap) or deleteOnTermination');
  const { requestId } = await nova.updateServerVolumeAttachment(
    ctx.client,
    sid,
    vid,
    { newVolumeId: swap ? newVolumeId : undefined, deleteOnTermination: change.deleteOnTermination },
    o,
  );
  // Only a swap runs on: deleteOnTermination is set when Nova answers.
  return {
    result: undefined,
    pending: swap ? pending(ctx, rules.serverAttachmentUpdate(sid, vid, newVolumeId, requestId)) : null,
  };
}
