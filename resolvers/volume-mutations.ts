/**
 * Core volume mutations: each maps its arguments to a use case's checked input (domain/volumes.ts,
 * domain/attachments.ts) and calls it; the use case tracks, notifies and reads back.
 */
import type { AttachTarget, DetachTarget } from '../adapters/contract/call-inputs';
import { BadUserInputError } from '../adapters/contract/errors';
import { safeText } from '../adapters/contract/input';
import { attachVolume, createVolume, deleteVolume, detachVolume, extendVolume, updateVolume } from '../domain';
import type { AttachVolumeInput, DetachVolumeInput, MutationResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../domain/context';
import { createVolumeSpec, hostConnector, idArg, keyValues, optionalText, ownFields, sizeArg } from './args';
import { attachmentRefFromId } from './attachment';
import { idempotencyArg } from './idempotency';
import { volumeRefFromId } from './volume';

/** Exactly one of the given inputs must be set. */
export function exactlyOne(given: Record<string, unknown>, argument: string): string {
  const set = Object.entries(given).filter(([, v]) => v !== null && v !== undefined);
  if (set.length !== 1)
    throw new BadUserInputError(
      `give exactly one of ${Object.keys(given)
        .map((k) => `${argument}.${k}`)
        .join(', ')}`,
      argument,
    );
  return set[0]![0];
}

/** Where to attach: a server or a host (exactly one member of `input.target`), its identifiers checked with the volume's backend's rules (the domain asks the kind's own rules, e.g. a tag's form). */
function attachTarget(ctx: GatewayContext, input: AttachVolumeInput, backend: string): AttachTarget {
  const b = ctx.registry.forId(backend);
  const { server, host } = input.target;
  const which = exactlyOne({ server, host }, 'input.target');
  return which === 'server'
    ? {
        kind: 'server',
        serverId: idArg(b, 'server', server!.serverId, 'input.target.server.serverId'),
        device: server!.device ? safeText(server!.device, 'input.target.server.device', 64) : undefined,
        tag: server!.tag ?? undefined,
        deleteOnTermination: server!.deleteOnTermination ?? undefined,
      }
    : {
        kind: 'host',
        connector: hostConnector(host!.connector, 'input.target.host.connector'),
        readOnly: host!.readOnly ?? false,
      };
}

/** What to detach from: a server, a host attachment or a node (exactly one member of `input.target`), checked with the volume's backend's rules. */
function detachTarget(ctx: GatewayContext, input: DetachVolumeInput, backend: string): DetachTarget {
  const b = ctx.registry.forId(backend);
  const { server, host, node } = input.target;
  const which = exactlyOne({ server, host, node }, 'input.target');
  return which === 'server'
    ? { kind: 'server', serverId: idArg(b, 'server', server!.serverId, 'input.target.server.serverId') }
    : which === 'node'
      ? { kind: 'node', nodeId: idArg(b, 'node', node!.nodeId, 'input.target.node.nodeId') }
      : {
          kind: 'hostAttachment',
          attachmentId: attachmentRefFromId(ctx, host!.hostAttachmentId, 'input.target.host.hostAttachmentId')
            .consumerId,
        };
}

/** A new size in bytes or GiB, positive. */
function newSize(input: { newSizeBytes?: number | null; newSizeGiB?: number | null }): number {
  const size = sizeArg(input.newSizeBytes, input.newSizeGiB, 'input.newSizeBytes', 'input.newSizeGiB');
  if (size === undefined)
    throw new BadUserInputError('give input.newSizeBytes or input.newSizeGiB', 'input.newSizeBytes');
  if (size <= 0) throw new BadUserInputError('the new size must be positive', 'input.newSizeBytes');
  return size;
}

export const volumeMutations: Pick<
  MutationResolvers,
  'createVolume' | 'deleteVolume' | 'detachVolume' | 'attachVolume' | 'extendVolume' | 'updateVolume'
> = {
  createVolume: async (_p, { input }, ctx) => {
    const backend = ctx.registry.forArgument(input.backend, 'input.backend');
    const spec = createVolumeSpec(input, backend, ctx.registry.all);
    return createVolume(ctx, { backend: backend.id, spec, idempotency: idempotencyArg('createVolume', input) });
  },
  deleteVolume: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    return deleteVolume(ctx, {
      volume,
      options: { own: ownFields(input, 'volumeId', 'idempotencyKey') },
      idempotency: idempotencyArg('deleteVolume', input),
    });
  },
  detachVolume: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    return detachVolume(ctx, {
      volume,
      target: detachTarget(ctx, input, volume.backend),
      idempotency: idempotencyArg('detachVolume', input),
    });
  },
  attachVolume: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    return attachVolume(ctx, {
      volume,
      target: attachTarget(ctx, input, volume.backend),
      idempotency: idempotencyArg('attachVolume', input),
    });
  },
  extendVolume: async (_p, { input }, ctx) => {
    const volume = volumeRefFromId(ctx, input.volumeId, 'input.volumeId');
    return extendVolume(ctx, {
      volume,
      newSizeBytes: newSize(input),
      idempotency: idempotencyArg('extendVolume', input),
    });
  },
  updateVolume: async (_p, { input }, ctx) =>
    updateVolume(ctx, {
      volume: volumeRefFromId(ctx, input.volumeId, 'input.volumeId'),
      idempotency: idempotencyArg('updateVolume', input),
      patch: () => ({
        name: optionalText(input.name, 'input.name', 255),
        description: optionalText(input.description, 'input.description'),
        metadata: input.metadata ? keyValues(input.metadata, 'input.metadata') : undefined,
      }),
    }),
};
