/** Node attachments: the claims Nomad's allocations hold on volumes, per client node. */
import type { CallOptions } from '../../contract/call-options';
import type { VolumeReader } from '../../contract/capabilities';
import type { Attachment, VolumeRef } from '../../contract/model';
import { mapWithConcurrency } from '../../http/concurrency';
import type { NomadContext } from '../context';
import { getVolumes } from './operations';
import { listVolumeStubs } from './requests';
import { volumePosition } from './results';

/** Most calls {@link listNodeAttachments} runs at once (Nomad has no multi-get). */
const CLAIM_READS = 8;

/**
 * Each node's claims in every namespace the caller may list. Nomad's `node_id` list takes one
 * node, so that is one list call per distinct node; then one read per distinct volume found
 * (the claims are in full reads only), at most `CLAIM_READS` at once. A claim is the
 * node's when its allocation stub names the node; the `node_id` list finds volumes of running
 * or to-be-run allocations, so claims still held by stopped allocations show only when a live
 * allocation on the node uses the same volume. A failed read fails the answer: a node's claims
 * are never silently short.
 */
export async function listNodeAttachments(
  ctx: NomadContext,
  nodeIds: readonly string[],
  o: CallOptions,
  readVolumes?: VolumeReader,
): Promise<Map<string, Attachment[]>> {
  const nodes = [...new Set(nodeIds)];
  const lists = await mapWithConcurrency(nodes, CLAIM_READS, (nodeId) =>
    listVolumeStubs(ctx.client, { namespace: '*', nodeId }, o),
  );
  const refs = new Map<string, VolumeRef>();
  for (const { data } of lists)
    for (const w of data ?? [])
      refs.set(volumePosition(w), { backend: ctx.backend, namespace: w.Namespace, nativeId: w.ID });
  const volumes = await (readVolumes ?? ((r) => getVolumes(ctx, r, o, CLAIM_READS)))([...refs.values()]);
  const claims = new Map(nodes.map((n) => [n, [] as Attachment[]]));
  for (const v of volumes) {
    if (v instanceof Error) throw v;
    for (const a of v?.attachments ?? []) {
      const nodeId = a.consumer.nodeId ?? null;
      if (nodeId !== null) claims.get(nodeId)?.push(a);
    }
  }
  return claims;
}
