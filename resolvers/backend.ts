/** Configured backends. */
import { callerNamespace } from '../domain';
import type { QueryResolvers, StorageBackendResolvers } from '../schema/generated/resolvers-types';

export const backendQueries: Pick<QueryResolvers, 'storageBackends' | 'storageBackend'> = {
  storageBackends: (_p, _a, ctx) => [...ctx.registry.all],
  storageBackend: (_p, { id }, ctx) => ctx.registry.find(id) ?? null,
};

export const backendType: StorageBackendResolvers = {
  capabilities: (b) => [...b.capabilities],
  health: (b, _a, ctx) => ctx.loaders.health.load(b.id),
  callerNamespace: (b, _a, ctx) => callerNamespace(ctx, b),
};
