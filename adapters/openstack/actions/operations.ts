/**
 * Cinder's volume actions by unified name, through the action table (`cinder/actions-table.ts`):
 * the body is built and checked, the microversion checked before sending, the answer mapped, and
 * the change it starts returned with its completion rule.
 */
import { inputField } from '../../contract/errors';
import type { Accepted } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { CinderAction, CinderActionResult } from './types';
import type { KeyValue, VolumeRef } from '../../contract/model';
import { actionEntry } from '../cinder/actions-table';
import * as req from '../cinder/requests';
import { sortedPairs } from '../../contract/key-values';
import { rules } from '../completion/rules';
import { pending, type OpenStackContext } from '../context';
import { checkedUuid } from '../ids';

export async function runCinderAction(
  ctx: OpenStackContext,
  ref: VolumeRef,
  a: CinderAction,
  o: CallOptions,
): Promise<Accepted<CinderActionResult>> {
  const id = checkedUuid(ref.nativeId, inputField('volumeId'));
  const entry = actionEntry(a.action);
  // The entry and the action share a name; TypeScript cannot correlate the union on its own.
  const body = entry.body(a);
  const { data, requestId } = await req.volumeAction(ctx.client, id, entry.wire, body, o, entry.needs?.(a as never));
  return {
    result: entry.result?.(data) ?? {},
    pending: entry.rule ? pending(ctx, rules.action(entry.rule, id, requestId)) : null,
  };
}

export async function showImageMetadata(ctx: OpenStackContext, ref: VolumeRef, o: CallOptions): Promise<KeyValue[]> {
  const { data } = await req.showImageMetadata(ctx.client, checkedUuid(ref.nativeId, 'id'), o);
  return sortedPairs(data?.metadata);
}
