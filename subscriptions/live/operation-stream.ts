/**
 * `operationUpdated(id)`: authorized as the `volumeOperation` query is (the caller started it, or
 * can read its target now), then the current state and every later change from the tracker,
 * completing after a terminal state. The tracker is listened to before the current state is read,
 * so no change falls between the two.
 */
import { GatewayError, NotFoundError } from '../../adapters/contract/errors';
import { decodeGlobalId } from '../../adapters/contract/ids';
import type { OperationRecord } from '../../adapters/contract/model';
import type { GatewayContext } from '../../domain/context';
import { TERMINAL } from '../operations/types';
import type { Fanout, EventSubscriber } from './fanout';
import { errorResult } from './format';
import type { LiveSpec } from './spec';
import { LiveStream } from './stream';
import type { OperationVisibility } from './types';
import type { ExecutionResult, ExecutionArgs } from 'graphql';

/** Options of {@link operationStream}. */
export interface OperationStreamOptions {
  fanout: Fanout;
  /** The subscriber's credential per backend: a document that needs backend reads (the operation's `target`) reads with it. */
  credential: EventSubscriber['credential'];
  /** Reads the operation as the caller may see it. */
  visibleOperation: OperationVisibility;
  maxQueued: number;
  /** Runs when the stream ends (counts, unsubscribe). */
  onClose: () => void;
  onOverflow?: () => void;
}

const later = (a: OperationRecord, b: OperationRecord): boolean =>
  a.updatedAt > b.updatedAt || (a.updatedAt === b.updatedAt && a.state !== b.state);

export async function operationStream(
  spec: LiveSpec,
  args: ExecutionArgs,
  ctx: GatewayContext,
  o: OperationStreamOptions,
): Promise<LiveStream | ExecutionResult> {
  const id = String(spec.args.id);
  let nativeId: string;
  try {
    nativeId = decodeGlobalId(id, 'Operation', 'id').nativeId;
  } catch (err) {
    if (err instanceof GatewayError) return errorResult(err);
    throw err;
  }
  let buffered: OperationRecord[] | null = [];
  let current: OperationRecord | null = null;
  let unsubscribe: (() => void) | null = null;
  const stream = new LiveStream({
    maxQueued: o.maxQueued,
    onOverflow: o.onOverflow,
    onClose: () => (unsubscribe?.(), o.onClose()),
  });
  const sub: Pick<EventSubscriber, 'spec' | 'args'> = { spec, args };
  // The string, not `ctx`: the closures below live as long as the subscription.
  const requestId = ctx.requestId;
  const yieldRecord = (r: OperationRecord): void => {
    if (current && !later(r, current)) return;
    current = r;
    // Subscribers of the same operation share the reads of each of its states.
    const event = `operation\0${r.id}\0${r.updatedAt}\0${r.state}`;
    stream.push(o.fanout.executeOnce(sub, r, { requestId, credential: o.credential, event }));
    if (TERMINAL.has(r.state)) stream.end();
  };
  unsubscribe = ctx.operations.subscribe((r) => {
    if (r.id !== nativeId) return;
    if (buffered) buffered.push(r);
    else yieldRecord(r);
  });
  let record: OperationRecord | null;
  try {
    record = await o.visibleOperation(ctx, id);
  } catch (err) {
    void stream.return();
    if (err instanceof GatewayError) return errorResult(err);
    throw err;
  }
  if (!record) {
    void stream.return();
    return errorResult(new NotFoundError('id: no such operation, or the caller may not see it'));
  }
  const pending = buffered;
  buffered = null;
  yieldRecord(record);
  for (const r of pending) yieldRecord(r);
  return stream;
}
