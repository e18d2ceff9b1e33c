/** Backends: configuration, capabilities, health. */
import type { BackendResolvers, QueryResolvers } from '../schema/generated/resolvers-types';

export const backendQueries: Pick<QueryResolvers, 'backends' | 'backend'> = {
  backends: (_p, _a, ctx) => [...ctx.registry.all],
  backend: (_p, { id }, ctx) => ctx.registry.find(id) ?? null,
};

export const backendType: BackendResolvers = {
  capabilities: (b) => [...b.capabilities],
  health: (b, _a, ctx) => ctx.loaders.health.load(b.id),
};
