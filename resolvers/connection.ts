/** Relay connection helpers shared by list resolvers. */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { Edge, Omission, PageInfo } from '../adapters/listing';
import { moduleForBackend } from '../adapters/modules';
import type { GatewayContext } from '../domain/context';

/** A single-backend page. */
export interface ConnectionResult<T> {
  edges: Edge<T>[];
  nodes: T[];
  pageInfo: PageInfo;
}

export function connection<T>(edges: Edge<T>[], pageInfo: PageInfo): ConnectionResult<T> {
  return { edges, nodes: edges.map((e) => e.node), pageInfo };
}

/** A backend a merged page left out, as the schema's VolumeListOmission. */
export interface OmissionResult {
  backend: VolumeBackend;
  reason: Omission['reason'];
  code: string | null;
  message: string;
}

/** A page merged across backends, as the schema's connection type (null items where backends failed). */
export interface MergedConnectionResult<T> {
  edges: Array<Edge<T> | null>;
  nodes: Array<T | null>;
  pageInfo: PageInfo;
  omittedBackends: OmissionResult[];
}

/**
 * The merged page. graphql-js turns an Error list item into null plus an error at that item's
 * path, so a backend's failure travels with the data under any transport, without a side channel.
 */
export function mergedConnection<T>(ctx: GatewayContext, edges: Edge<T>[], pageInfo: PageInfo, omissions: Omission[]): MergedConnectionResult<T> {
  const withErrors: Array<Edge<T> | Error> = [...edges];
  // From the last, so earlier indexes stay right.
  for (const o of [...omissions].reverse()) if (o.reason === 'FAILED' && o.error) withErrors.splice(o.at, 0, o.error);
  // The resolver types say null where the schema has null; what resolves there is the Error.
  const asItem = <I>(x: I | Error): I | null => x as I | null;
  return {
    edges: withErrors.map(asItem),
    nodes: withErrors.map((e) => asItem(e instanceof Error ? e : e.node)),
    pageInfo,
    omittedBackends: omissions.map((o) => ({
      backend: ctx.registry.forId(o.backend),
      reason: o.reason,
      code: o.error?.code ?? null,
      message:
        o.reason === 'NO_CREDENTIAL'
          ? `backend "${o.backend}" needs a credential (${moduleForBackend(ctx.registry.forId(o.backend)).credential.header}) and the request carried none for it`
          : (o.error?.message ?? 'the backend failed'),
    })),
  };
}
