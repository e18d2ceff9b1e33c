/** The VolumeOperation entity and `volumeOperation(id)`; what a caller may see is the domain's rule (domain/operations.ts). */
import { loadOperation, operationId, operationTarget } from '../domain';
import type {
  QueryResolvers,
  VolumeOperationResolvers,
  VolumeOperationTargetResolvers,
} from '../schema/generated/resolvers-types';

export const operationQueries: Pick<QueryResolvers, 'volumeOperation'> = {
  volumeOperation: (_p, { id }, ctx) => loadOperation(ctx, id),
};

const iso = (ms: number): string => new Date(ms).toISOString();

export const operationType: VolumeOperationResolvers = {
  __resolveReference: (ref, ctx) => loadOperation(ctx, ref.id),
  id: (r) => operationId(r),
  backend: (r, _a, ctx) => ctx.registry.forId(r.backend),
  target: (r, _a, ctx) => operationTarget(ctx, r),
  createdAt: (r) => iso(r.createdAt),
  updatedAt: (r) => iso(r.updatedAt),
  deadlineAt: (r) => iso(r.deadline),
};

export const operationTargetType: VolumeOperationTargetResolvers = {
  __resolveType: (t) => t.__typename,
};
