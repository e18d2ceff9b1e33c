/** Tracked operations: starting them from mutations, reading them back, and the VolumeOperation entity. */
import type { Accepted } from '../adapters/contract/backend';
import { decodeGlobalId, encodeGlobalId } from '../adapters/contract/ids';
import type { OperationKind, OperationRecord } from '../adapters/contract/model';
import type { QueryResolvers, VolumeOperationResolvers, VolumeOperationTargetResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../domain/context';
import { ownerKey } from '../subscriptions/operations';

export const operationId = (r: { backend: string; scope: string; id: string }): string => encodeGlobalId({ kind: 'Operation', backend: r.backend, scope: r.scope, nativeId: r.id });

/** What an operation acts on. */
export interface OperationTarget {
  backend: string;
  scope: string;
  /** Global id of the volume or snapshot. */
  id: string;
}

/** Hands a mutation's pending work (or its synchronous success) to the tracker. */
export function track(ctx: GatewayContext, kind: OperationKind, target: OperationTarget, accepted: Accepted<unknown>): Promise<OperationRecord> {
  return ctx.operations.start({
    kind,
    backend: target.backend,
    scope: target.scope,
    targetId: target.id,
    credential: ctx.call(target.backend).credential,
    requestId: ctx.requestId,
    pending: accepted.pending,
  });
}

/** Whether the caller may see the operation: they started it, or can read its target now. */
async function visible(ctx: GatewayContext, r: OperationRecord): Promise<boolean> {
  if (r.owner === ownerKey(r.backend, ctx.call(r.backend).credential)) return true;
  const t = decodeGlobalId(r.targetId, null);
  if (t.kind !== 'Volume') return false;
  const v = await ctx.loaders.volume.load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId }).catch(() => null);
  return v !== null;
}

/** An operation the caller may see; anything else is reported as absent, like an unknown id. */
export async function loadOperation(ctx: GatewayContext, id: string, argument = 'id'): Promise<OperationRecord | null> {
  const p = decodeGlobalId(id, 'Operation', argument);
  ctx.registry.forId(p.backend);
  const r = await ctx.operations.get(p.nativeId);
  if (!r || r.backend !== p.backend) return null;
  return (await visible(ctx, r)) ? r : null;
}

/** Operations on a target the caller has already read (so may see), newest first. */
export async function operationsOf(ctx: GatewayContext, targetId: string): Promise<OperationRecord[]> {
  const records = await ctx.operations.forTarget(targetId);
  return [...records].sort((a, b) => b.createdAt - a.createdAt);
}

export const operationQueries: Pick<QueryResolvers, 'volumeOperation'> = {
  volumeOperation: (_p, { id }, ctx) => loadOperation(ctx, id),
};

const iso = (ms: number): string => new Date(ms).toISOString();

export const operationType: VolumeOperationResolvers = {
  __resolveReference: (ref, ctx) => loadOperation(ctx, ref.id),
  id: (r) => operationId(r),
  backend: (r, _a, ctx) => ctx.registry.forId(r.backend),
  // Through the same loaders as `volume(id)`: an operation's target and the volume agree within a request.
  target: async (r, _a, ctx) => {
    const t = decodeGlobalId(r.targetId, null);
    if (t.kind === 'Volume') return ctx.loaders.volume.load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId }).catch(() => null);
    if (t.kind === 'Snapshot' && ctx.registry.forId(t.backend).snapshotReads) return ctx.loaders.snapshot.load({ backend: t.backend, scope: t.scope, nativeId: t.nativeId }).catch(() => null);
    return null;
  },
  createdAt: (r) => iso(r.createdAt),
  updatedAt: (r) => iso(r.updatedAt),
  deadlineAt: (r) => iso(r.deadline),
};

export const operationTargetType: VolumeOperationTargetResolvers = {
  __resolveType: (t) => t.__typename,
};
