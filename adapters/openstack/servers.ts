/**
 * Nova servers and their volume attachments. Nova's attachment list is checked against Cinder's
 * view of each volume (read with the batch strategy), so an attachment the two services disagree
 * on shows as ERROR with the reason instead of a confident ATTACHED.
 */
import type { Accepted, CallOptions } from '../backend';
import { BadUserInputError } from '../errors';
import type { Attachment, Volume, VolumeRef } from '../model';
import { getVolumes } from './batch';
import { rules } from './completion-rules';
import { orNull, pending, type OpenStackContext } from './context';
import { checkedUuid, UUID } from './ids';
import * as nova from './nova/requests';
import { toServerAttachment, type NovaVolumeAttachment } from './nova/results';

/** Cinder reads of one serverAttachments call in flight at once. */
const READ_CONCURRENCY = 8;

export async function serverAttachments(
  ctx: OpenStackContext,
  serverIds: readonly string[],
  o: CallOptions,
  readVolumes: (refs: readonly VolumeRef[]) => Promise<Array<Volume | null | Error>> = (refs) => getVolumes(ctx, refs, o, READ_CONCURRENCY),
): Promise<Map<string, Attachment[]>> {
  const { projectId } = await ctx.client.session(o);
  const asked = [...new Set(serverIds)];
  const lists = await Promise.all(
    asked.map(async (id): Promise<NovaVolumeAttachment[]> => (UUID.test(id) ? ((await orNull(nova.listServerVolumeAttachments(ctx.client, id.toLowerCase(), o)))?.data?.volumeAttachments ?? []) : [])),
  );
  const volumeIds = [...new Set(lists.flat().map((a) => a.volumeId.toLowerCase()))];
  const read = await readVolumes(volumeIds.map((nativeId) => ({ backend: ctx.backend, namespace: projectId, nativeId })));
  const volumes = new Map<string, Volume | null>();
  read.forEach((v, i) => {
    if (v instanceof Error) throw v;
    volumes.set(volumeIds[i]!, v);
  });
  const out = new Map<string, Attachment[]>();
  asked.forEach((id, i) => out.set(id, lists[i]!.map((a) => toServerAttachment(ctx.backend, projectId, a, volumes.get(a.volumeId.toLowerCase()) ?? null))));
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
  const sid = checkedUuid(serverId, 'input.serverId');
  const vid = checkedUuid(volumeId, 'input.volumeId');
  const newVolumeId = change.newVolumeId === undefined ? undefined : checkedUuid(change.newVolumeId, 'input.newVolumeId');
  const swap = newVolumeId !== undefined && newVolumeId !== vid;
  if (!swap && change.deleteOnTermination === undefined) throw new BadUserInputError('nothing to change: give newVolumeId (swap) or deleteOnTermination', 'input');
  const { requestId } = await nova.updateServerVolumeAttachment(ctx.client, sid, vid, { newVolumeId: swap ? newVolumeId : undefined, deleteOnTermination: change.deleteOnTermination }, o);
  // Only a swap runs on: deleteOnTermination is set when Nova answers.
  return { result: undefined, pending: swap ? pending(ctx, rules.serverAttachmentUpdate(sid, vid, newVolumeId, requestId)) : null };
}
