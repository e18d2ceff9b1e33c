/** Tracked operations: starting them from mutations, reading them back, and the Operation type. */
import type { Accepted, CallOptions } from '../adapters/backend';
import { decodeGlobalId, encodeGlobalId } from '../adapters/ids';
import type { OperationResolvers, QueryResolvers } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';
import { ownerKey, type OperationKind, type OperationRecord } from '../subscriptions/operations';

export const operationId = (r: OperationRecord): string => encodeGlobalId({ kind: 'Operation', backend: r.backend, scope: r.scope, nativeId: r.id });

/** Hands a mutation's pending work (or its synchronous success) to the tracker. */
export function track(ctx: GatewayContext, kind: OperationKind, target: { backend: string; scope: string; id: string }, accepted: Accepted<unknown>): Promise<OperationRecord> {
  const call: CallOptions = ctx.call(target.backend);
  return ctx.operations.start({ kind, backend: target.backend, scope: target.scope, targetId: target.id, credential: call.credential, requestId: ctx.requestId, pending: accepted.pending });
}

/**
 * An operation the caller may see: one they started (same backend credential), or one whose
 * target they can read now. Anything else is reported as absent, like an unknown id.
 */
export async function loadOperation(ctx: GatewayContext, id: string, argument = 'id'): Promise<OperationRecord | null> {
  const p = decodeGlobalId(id, 'Operation', argument);
  ctx.registry.forId(p.backend);
  const r = await ctx.operations.get(p.nativeId);
  if (!r || r.backend !== p.backend) return null;
  if (r.owner === ownerKey(r.backend, ctx.call(r.backend).credential)) return r;
  const t = decodeGlobalId(r.targetId, null);
  if (t.kind !== 'Volume') return null;
  const v = await ctx.loaders.volume.load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId }).catch(() => null);
  return v ? r : null;
}

export const operationQueries: Pick<QueryResolvers, 'operation'> = {
  operation: (_p, { id }, ctx) => loadOperation(ctx, id),
};

const iso = (ms: number): string => new Date(ms).toISOString();

export const operationType: OperationResolvers = {
  id: (r) => operationId(r),
  backend: (r, _a, ctx) => ctx.registry.forId(r.backend),
  target: async (r, _a, ctx) => {
    const t = decodeGlobalId(r.targetId, null);
    if (t.kind === 'Volume') return ctx.loaders.volume.load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId }).catch(() => null);
    if (t.kind === 'Snapshot') return ctx.registry.forId(t.backend).getSnapshot(t.scope, t.nativeId, ctx.call(t.backend)).catch(() => null);
    return null;
  },
  createdAt: (r) => iso(r.createdAt),
  updatedAt: (r) => iso(r.updatedAt),
  deadline: (r) => iso(r.deadline),
};
