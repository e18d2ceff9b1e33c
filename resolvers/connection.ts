/** Relay connection helpers shared by list resolvers, and the answers of merged fields. */
import type { VolumeBackend } from '../adapters/contract/backend';
import { UnauthenticatedError } from '../adapters/contract/errors';
import type { Edge, Merged, Omission, PageInfo } from '../adapters/listing';
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

/** A list merged across backends, as the schema's VolumeAttachmentList (null items where backends failed). */
export interface MergedListResult<T> {
  nodes: Array<T | null>;
  omittedBackends: OmissionResult[];
}

/**
 * `items` with each FAILED backend's error standing where its items would be. graphql-js turns an
 * Error list item into null plus an error at that item's path, so a backend's failure travels with
 * the data under any transport, without a side channel.
 */
function withFailures<T>(items: readonly T[], omissions: readonly Omission[]): Array<T | Error> {
  const out: Array<T | Error> = [...items];
  // From the last, so earlier indexes stay right.
  for (const o of [...omissions].reverse()) if (o.reason === 'FAILED' && o.error) out.splice(o.at, 0, o.error);
  return out;
}

/** The resolver types say null where the schema has null; what resolves there is the Error. */
const asItem = <I>(x: I | Error): I | null => x as I | null;

const noCredential = (ctx: GatewayContext, backend: string): string =>
  `backend "${backend}" needs a credential (${ctx.registry.credentialHeader(ctx.registry.forId(backend))}) and the request carried none for it`;

function omittedBackends(ctx: GatewayContext, omissions: readonly Omission[]): OmissionResult[] {
  return omissions.map((o) => ({
    backend: ctx.registry.forId(o.backend),
    reason: o.reason,
    code: o.error?.code ?? null,
    message: o.reason === 'NO_CREDENTIAL' ? noCredential(ctx, o.backend) : (o.error?.message ?? 'the backend failed'),
  }));
}

/** The merged page: a null item (its error) where each failed backend's items would be, and every omission named. */
export function mergedConnection<T>(
  ctx: GatewayContext,
  edges: Edge<T>[],
  pageInfo: PageInfo,
  omissions: Omission[],
): MergedConnectionResult<T> {
  const withErrors = withFailures(edges, omissions);
  return {
    edges: withErrors.map(asItem),
    nodes: withErrors.map((e) => asItem(e instanceof Error ? e : e.node)),
    pageInfo,
    omittedBackends: omittedBackends(ctx, omissions),
  };
}

/** A merged list, by the same rule as a merged page. */
export function mergedList<T>(ctx: GatewayContext, m: Merged<T>): MergedListResult<T> {
  return { nodes: withFailures(m.items, m.omissions).map(asItem), omittedBackends: omittedBackends(ctx, m.omissions) };
}

/**
 * A merged list as the deprecated list fields answer it: whole, or failed as a whole with the
 * first backend left out (its error; UNAUTHENTICATED for a missing credential, as the backend
 * itself would refuse it), as before they had `…List` beside them.
 */
export function wholeList<T>(ctx: GatewayContext, m: Merged<T>): T[] {
  const first = m.omissions[0];
  if (!first) return m.items;
  throw first.reason === 'FAILED' && first.error
    ? first.error
    : new UnauthenticatedError(noCredential(ctx, first.backend), { backend: first.backend });
}
