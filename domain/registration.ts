/** Registering an existing provider volume in a backend's catalogue, and removing one from it only (the `registration` facet). */
import type { VolumeRegistration } from '../adapters/contract/capabilities';
import type { VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { volumeId } from './ids';
import type { CheckedFor } from './input';
import { done, readBack, target, track } from './operations';
import type { VolumeChange, VolumeRemoval } from './volumes';

export interface RegisterVolume {
  /** The configured backend's id. */
  backend: string;
  spec: CheckedFor<Parameters<VolumeRegistration['registerVolume']>[0]>;
}

export async function registerVolume(ctx: GatewayContext, input: RegisterVolume): Promise<VolumeChange> {
  const b = ctx.registry.forId(input.backend);
  const ref = await ctx.registry.capable(b, 'registration').registerVolume(input.spec(b), ctx.call(b.id));
  const operation = await track(ctx, 'REGISTER_VOLUME', target(ref), done(ref));
  return { volume: await readBack(ctx, ref), operation };
}

export interface DeregisterVolume {
  volume: VolumeRef;
  /** Remove it even while claimed. */
  force: boolean;
}

export async function deregisterVolume(ctx: GatewayContext, input: DeregisterVolume): Promise<VolumeRemoval> {
  const ref = input.volume;
  await ctx.registry.capable(ctx.registry.forId(ref.backend), 'registration').deregisterVolume(ref, input.force, ctx.call(ref.backend));
  ctx.loaders.volume.clear(ref);
  return { deletedId: volumeId(ref), operation: await track(ctx, 'DEREGISTER_VOLUME', target(ref), done(undefined)) };
}
