/** Relay connection helpers shared by list resolvers. */
import type { Edge } from '../adapters/listing';
import type { GatewayContext } from '../server/context';
import type { GatewayError } from '../adapters/errors';

export interface ConnectionResult<T> {
  edges: Edge<T>[];
  nodes: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export function connection<T>(edges: Edge<T>[], pageInfo: ConnectionResult<T>['pageInfo']): ConnectionResult<T> {
  return { edges, nodes: edges.map((e) => e.node), pageInfo };
}

/** Records failures of some backends; the rest of the answer still comes back. */
export function reportPartial(ctx: GatewayContext, failures: GatewayError[], path: ReadonlyArray<string | number>): void {
  for (const error of failures) ctx.partialErrors.push({ error, path });
}

/** `info.path` as an array. */
export function pathOf(p: { prev: unknown; key: string | number } | undefined): Array<string | number> {
  const out: Array<string | number> = [];
  for (let c = p as { prev?: unknown; key: string | number } | undefined; c; c = c.prev as typeof c) out.unshift(c.key);
  return out;
}
