/**
 * A backend's own volume actions (the `volumeActions` facet), by unified name: the backend's
 * implementation takes its own action union and maps it to the wire.
 */
import type { KeyValue, OperationKind, OperationRecord, Volume, VolumeRef } from '../adapters/contract/model';
import type { VolumeAction, VolumeActionResult } from '../adapters/contract/capabilities';
import type { GatewayContext } from './context';
import { volumeId } from './ids';
import type { IdempotencyInput } from './idempotency';
import { readBack, target, track, trackedOncePerKey } from './operations';

export interface RunVolumeAction {
  volume: VolumeRef;
  /** The checked action, as the backend takes it. */
  action: VolumeAction;
  /** What the action is tracked as (the caller knows which actions continue on the backend). @default 'VOLUME_ACTION' */
  operationKind?: OperationKind;
  /** Read the volume's image metadata after the action, for actions whose answer carries none. @default false */
  readImageMetadata?: boolean;
  /**
   * The caller's idempotency key, if any: a retry with it answers the first result. Never give one
   * for an action whose result carries secrets (connection info): results are stored.
   */
  idempotency?: IdempotencyInput;
}

/** An action's answer: the volume read back, its operation, and what the action returned. */
export interface VolumeActionOutcome {
  volume: Volume | null;
  operation: OperationRecord;
  result: VolumeActionResult;
  /** The image metadata after the action, when asked for. */
  imageMetadata?: KeyValue[];
}

export async function runVolumeAction(ctx: GatewayContext, input: RunVolumeAction): Promise<VolumeActionOutcome> {
  const ref = input.volume;
  const actions = ctx.registry.capable(ctx.registry.forId(ref.backend), 'volumeActions');
  const { operation, result } = await trackedOncePerKey(
    ctx,
    ref.backend,
    input.idempotency,
    volumeId(ref),
    async () => {
      const accepted = await actions.runVolumeAction(ref, input.action, ctx.call(ref.backend));
      return {
        result: accepted.result,
        operation: await track(ctx, input.operationKind ?? 'VOLUME_ACTION', target(ref), accepted),
      };
    },
  );
  const outcome: VolumeActionOutcome = { volume: await readBack(ctx, ref), operation, result };
  if (input.readImageMetadata) outcome.imageMetadata = await volumeImageMetadata(ctx, ref);
  return outcome;
}

/** The image metadata the backend holds for a volume. */
export function volumeImageMetadata(ctx: GatewayContext, ref: VolumeRef): Promise<KeyValue[]> {
  return ctx.registry
    .capable(ctx.registry.forId(ref.backend), 'volumeActions')
    .showImageMetadata(ref, ctx.call(ref.backend));
}
