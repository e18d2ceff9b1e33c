/** Registering an existing provider volume in a backend's catalogue, and removing one from it only (the `registration` facet). */
import type { VolumeRegistration } from '../adapters/contract/capabilities';
import type { VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { volumeId } from './ids';
import type { CheckedFor } from './input';
import type { IdempotencyInput } from './idempotency';
import { done, readBack, target, track, trackedOncePerKey } from './operations';
import type { VolumeChange, VolumeRemoval } from './volumes';

export interface RegisterVolume {
  /** The configured backend's id. */
  backend: string;
  spec: CheckedFor<Parameters<VolumeRegistration['registerVolume']>[0]>;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function registerVolume(ctx: GatewayContext, input: RegisterVolume): Promise<VolumeChange> {
  const b = ctx.registry.forId(input.backend);
  const registration = ctx.registry.capable(b, 'registration');
  const spec = input.spec(b);
  const { ref, operation } = await trackedOncePerKey<{ ref: VolumeRef }>(
    ctx,
    b.id,
    input.idempotency,
    (r) => volumeId(r.ref),
    async () => {
      const ref = await registration.registerVolume(spec, ctx.call(b.id));
      return { ref, operation: await track(ctx, 'REGISTER_VOLUME', target(ref), done(ref)) };
    },
  );
  return { volume: await readBack(ctx, ref), operation };
}

export interface DeregisterVolume {
  volume: VolumeRef;
  /** Remove it even while claimed. */
  force: boolean;
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function deregisterVolume(ctx: GatewayContext, input: DeregisterVolume): Promise<VolumeRemoval> {
  const ref = input.volume;
  const registration = ctx.registry.capable(ctx.registry.forId(ref.backend), 'registration');
  return trackedOncePerKey(ctx, ref.backend, input.idempotency, volumeId(ref), async () => {
    await registration.deregisterVolume(ref, input.force, ctx.call(ref.backend));
    ctx.loaders.volume.clear(ref);
    return { deletedId: volumeId(ref), operation: await track(ctx, 'DEREGISTER_VOLUME', target(ref), done(undefined)) };
  });
}
