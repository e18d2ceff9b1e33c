/**
 * Checks a change: reads what its rule names (`rules.ts`), in parallel, then
 * evaluates the rule on what was read. Cinder's user messages are read only when a verdict is due.
 * The caller's credential comes with the call options; the rule holds none.
 */
import type { CallOptions } from '../../contract/call-options';
import type { ChangeCheck, CompletionRule, RuleValue } from '../../contract/completion';
import { GatewayError } from '../../contract/errors';
import * as cinder from '../cinder/requests';
import { toMessageFacts, toSnapshotFacts, toVolumeFacts, type MessageFacts } from '../cinder/results';
import { evaluate, ruleSpec, wantsMessages, type Observation, type Source } from './rules';
import type { OpenStackContext } from '../context';
import * as nova from '../nova/requests';
import { attachedVolumeIds, toActionFacts } from '../nova/results';
import { listServerAttachments } from '../attachments/servers';
import { showSnapshot } from '../snapshots/operations';
import { showVolume } from '../volumes/operations';

const text = (v: RuleValue | undefined): string | null => (typeof v === 'string' && v !== '' ? v : null);

export async function checkChange(ctx: OpenStackContext, rule: CompletionRule, o: CallOptions): Promise<ChangeCheck> {
  const spec = ruleSpec(rule.name);
  // An unknown name evaluates to FAILED with the reason.
  if (!spec) return evaluate(rule, {});
  const observed = await observe(ctx, spec.reads, rule.params, o);
  const check = evaluate(rule, observed);
  if (!wantsMessages(spec, rule, check)) return check;
  const messages = await readMessages(ctx, rule.params, o);
  return messages.length > 0 ? evaluate(rule, { ...observed, messages }) : check;
}

async function observe(
  ctx: OpenStackContext,
  reads: readonly Source[],
  p: Record<string, RuleValue>,
  o: CallOptions,
): Promise<Observation> {
  const out: Observation = {};
  await Promise.all(
    reads.map(async (source) => {
      switch (source) {
        case 'volume': {
          const v = await showVolume(ctx, text(p.volumeId) ?? '', o);
          out.volume = v ? toVolumeFacts(v) : null;
          return;
        }
        case 'snapshot': {
          const s = await showSnapshot(ctx, text(p.snapshotId) ?? '', o);
          out.snapshot = s ? toSnapshotFacts(s) : null;
          return;
        }
        case 'serverVolumes': {
          const list = await listServerAttachments(ctx, text(p.serverId) ?? '', o);
          out.serverVolumes = list ? attachedVolumeIds(list) : null;
          return;
        }
        case 'instanceAction':
          out.action = await readAction(ctx, text(p.serverId), text(p.novaRequestId), o);
          return;
      }
    }),
  );
  return out;
}

/**
 * Nova's instance action for the request, or null. A refusal that will not go away (a policy
 * hiding actions, an unknown request id) means no signal, not a failed change; transient
 * trouble is thrown for the tracker to retry.
 */
async function readAction(
  ctx: OpenStackContext,
  serverId: string | null,
  requestId: string | null,
  o: CallOptions,
): Promise<Observation['action']> {
  if (!serverId || !requestId) return null;
  try {
    const r = await nova.showInstanceAction(ctx.client, serverId, requestId, o);
    return r.data?.instanceAction ? toActionFacts(r.data.instanceAction) : null;
  } catch (err) {
    if (err instanceof GatewayError && !err.retryable) return null;
    throw err;
  }
}

/**
 * Cinder's user messages for the change: those of the request that started it (exact for
 * changes Cinder runs itself), else the newest about its volume or snapshot. Clouds before 3.3
 * have none, and a failed read must not hide the failure itself: both read as none.
 */
async function readMessages(
  ctx: OpenStackContext,
  p: Record<string, RuleValue>,
  o: CallOptions,
): Promise<MessageFacts[]> {
  const requestId = text(p.cinderRequestId);
  const resourceId = text(p.volumeId) ?? text(p.snapshotId);
  if (!requestId && !resourceId) return [];
  try {
    const r = await cinder.listMessages(ctx.client, requestId ? { requestId } : { resourceId: resourceId! }, o);
    return (r.data?.messages ?? []).map(toMessageFacts);
  } catch (err) {
    if (err instanceof GatewayError) return [];
    throw err;
  }
}
