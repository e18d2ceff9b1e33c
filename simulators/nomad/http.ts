/**
 * The agent-side request plumbing every route shares, after command/agent/http.go:
 * `parse()` (query options, with its exact 400 texts and their order), `parseWriteRequest()`,
 * `setMeta()` (X-Nomad-* headers), the error → status mapping of `wrap()` and blocking queries
 * (nomad/rpc.go `blockingRPC`). Routes return a `HandlerResult`; server.ts writes it.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AclStore, Acl } from './acl';
import { ClaimError } from './claims';
import type { GoJSON } from './encode';
import { GoParseError, parseBool, parseDuration, parseGoInt } from './golang';
import { PERMISSION_DENIED, RpcError, type SimState } from './state';

/** QueryMeta (hashicorp/nomad command/agent/http.go `setMeta`: the response meta headers). */
export interface QueryMeta {
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
  NextToken: string;
}

/** What a route produces; server.ts turns it into bytes like Nomad's `wrap()`. */
export type HandlerResult =
  | { kind: 'json'; value: GoJSON; meta?: QueryMeta }
  | { kind: 'empty'; status?: number; meta?: QueryMeta }
  | { kind: 'error'; status: number; text: string; meta?: QueryMeta }
  | { kind: 'streamed' };

/** Shared simulator services the routes use. */
export interface SimContext {
  state: SimState;
  acl: AclStore;
  region: string;
  eventHeartbeatMs: number;
  /** Registers a long-lived stream so close() can end it; returns an unregister function. */
  trackStream(end: () => void): () => void;
}

/** A parsed request, as Go's handler sees it. */
export interface SimRequest {
  method: string;
  /** Decoded path (`req.URL.Path`). */
  path: string;
  query: Map<string, string[]>;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** False when Go would see `http.NoBody` (no Content-Length/Transfer-Encoding, or length 0). */
  hasBody: boolean;
  /** The ACL secret from X-Nomad-Token / Authorization (parseToken). */
  token: string;
  raw: IncomingMessage;
  res: ServerResponse;
}

/** `query.Get(key)`: the first value or "". */
export function qget(req: SimRequest, key: string): string {
  return req.query.get(key)?.[0] ?? '';
}

/** Parsed `structs.QueryOptions`. */
export interface QueryOptions {
  region: string;
  namespace: string;
  prefix: string;
  perPage: number;
  nextToken: string;
  filter: string;
  reverse: boolean;
  /** `wait` in ns, or null when absent. */
  maxQueryTimeNs: bigint | null;
  minQueryIndex: bigint;
}

export const META_NONE: QueryMeta = { Index: 0, LastContact: 0, KnownLeader: false, NextToken: '' };

/** A 400 written directly by parse helpers (no meta headers). */
export function badRequest(text: string): HandlerResult {
  return { kind: 'error', status: 400, text };
}

/**
 * `HTTPServer.parse()`: region, token, stale, prefix, namespace, per_page/next_token, filter,
 * reverse, then wait and index — validation errors in that order.
 */
export function parseQueryOptions(ctx: SimContext, req: SimRequest): QueryOptions | HandlerResult {
  const stale = req.query.get('stale');
  if (stale !== undefined && stale[0] !== '' && stale[0] !== undefined) {
    try {
      parseBool(stale[0]);
    } catch {
      return badRequest('Expect `true` or `false` for `stale` query string parameter');
    }
  }
  let perPage = 0;
  const rawPerPage = qget(req, 'per_page');
  if (rawPerPage !== '') {
    try {
      perPage = Number(parseGoInt(rawPerPage, 10, 32, false));
    } catch {
      return badRequest('Expect a number for `per_page` query string parameter');
    }
  }
  let maxQueryTimeNs: bigint | null = null;
  const wait = qget(req, 'wait');
  if (wait !== '') {
    try {
      maxQueryTimeNs = parseDuration(wait);
    } catch {
      return badRequest('Invalid wait time');
    }
  }
  let minQueryIndex = 0n;
  const idx = qget(req, 'index');
  if (idx !== '') {
    try {
      minQueryIndex = parseGoInt(idx, 10, 64, true);
    } catch {
      return badRequest('Invalid index');
    }
  }
  return {
    region: qget(req, 'region') || ctx.region,
    namespace: qget(req, 'namespace') || 'default',
    prefix: qget(req, 'prefix'),
    perPage,
    nextToken: qget(req, 'next_token'),
    filter: qget(req, 'filter'),
    reverse: qget(req, 'reverse') === 'true',
    maxQueryTimeNs,
    minQueryIndex,
  };
}

export function isResult(x: unknown): x is HandlerResult {
  return typeof x === 'object' && x !== null && 'kind' in x;
}

/** `parseWriteRequest()`: namespace, token, region (no validation). */
export function writeRequest(ctx: SimContext, req: SimRequest): { namespace: string; region: string } {
  return { namespace: qget(req, 'namespace') || 'default', region: qget(req, 'region') || ctx.region };
}

/** The server-side RPC preamble: forwarding by region, then authentication. */
export function rpcAuth(ctx: SimContext, req: SimRequest, region: string): Acl {
  if (region !== ctx.region) throw new RpcError('No path to region');
  const acl = ctx.acl.resolve(req.token);
  if (!acl) throw new RpcError(PERMISSION_DENIED);
  return acl;
}

/** `X-Nomad-Index`/`KnownLeader`/`LastContact` as a leader answers (`setQueryMeta`). */
export function leaderMeta(index: number, nextToken = ''): QueryMeta {
  return { Index: index, LastContact: 0, KnownLeader: true, NextToken: nextToken };
}

/**
 * Maps an RPC failure to the HTTP answer (`wrap()`/`errCodeFromHandler`): coded RPC errors keep
 * their status, messages ending in `Permission denied` / `ACL token not found` are 403, and
 * everything else — validation failures and "not found" on write paths included — is 500.
 */
export function rpcErrorResult(e: unknown): HandlerResult {
  if (e instanceof RpcError) {
    if (e.code !== undefined) return { kind: 'error', status: e.code, text: e.message };
    if (e.message.endsWith(PERMISSION_DENIED)) return { kind: 'error', status: 403, text: PERMISSION_DENIED };
    if (e.message.endsWith('ACL token not found')) return { kind: 'error', status: 403, text: 'ACL token not found' };
    return { kind: 'error', status: 500, text: e.message };
  }
  if (e instanceof ClaimError || e instanceof GoParseError) return { kind: 'error', status: 500, text: e.message };
  throw e;
}

/** Nomad's `MaxBlockingRPCQueryTime` / `DefaultBlockingRPCQueryTime`. */
const MAX_BLOCK_MS = 300_000;

/**
 * `blockingRPC`: with `index > 0`, re-runs the query whenever a watched key fires until the
 * result index passes `index` or the wait (default and cap 300 s, plus up to wait/16 jitter)
 * expires; on timeout the last result is returned with its unchanged index.
 */
export async function blockingQuery<T extends { index: number }>(
  ctx: SimContext,
  qo: QueryOptions,
  run: (ws: Set<string>) => T,
): Promise<T> {
  if (qo.minQueryIndex === 0n) return run(new Set());
  let waitMs = qo.maxQueryTimeNs === null ? 0 : Number(qo.maxQueryTimeNs / 1000000n);
  if (waitMs > MAX_BLOCK_MS) waitMs = MAX_BLOCK_MS;
  else if (waitMs <= 0) waitMs = MAX_BLOCK_MS;
  waitMs += Math.floor(Math.random() * (waitMs / 16));
  const deadline = Date.now() + waitMs;
  for (;;) {
    const ws = new Set<string>();
    const r = run(ws);
    if (BigInt(r.index) > qo.minQueryIndex) return r;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return r;
    const fired = await ctx.state.waitFor(ws, remaining);
    if (!fired) return r;
  }
}

/**
 * `parseCSISecrets`: `X-Nomad-CSI-Secrets: k1=v1,k2=v2`, split on `,` then the first `=`;
 * malformed pairs are ignored; nil when nothing valid.
 */
export function parseCSISecrets(req: SimRequest): Map<string, string> | null {
  const raw = req.headers['x-nomad-csi-secrets'];
  const header = Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? '');
  if (header === '') return null;
  const out = new Map<string, string>();
  for (const kv of header.split(',')) {
    const eq = kv.indexOf('=');
    if (eq >= 0) out.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  return out.size === 0 ? null : out;
}
