/**
 * Volume listing across backends: one merged, stable order (backends in configuration order,
 * each in its own stable order: Nomad by namespace then id), Relay cursors, and filters the
 * backends cannot apply themselves (derived status).
 *
 * Each page looks for one item more than asked for: its position becomes the next cursor, so
 * `hasNextPage` is exact and no page is ever empty while `hasNextPage` was true, except when a
 * post-filter finds nothing within {@link MAX_ROUNDS_PER_BACKEND} backend pages (then the page is
 * short and the cursor resumes where scanning stopped).
 */
import { lacksCredential, type VolumeBackend } from './contract/backend';
import type { BackendPage } from './contract/call-answers';
import type { CallOptions } from './contract/call-options';
import type { VolumeListQuery } from './contract/call-inputs';
import { BadUserInputError, ErrorCode, GatewayError } from './contract/errors';
import { safeText } from './contract/input';
import type { Volume } from './contract/model';
import { backendDeadline } from './list-deadline';

/** Backend pages fetched per backend for one page of results when a post-filter drops items. */
export const MAX_ROUNDS_PER_BACKEND = 10;

/** Longest one backend's part of a merged list may take (all its rounds) before it is left out as FAILED. */
export const DEFAULT_LIST_BACKEND_DEADLINE_MS = 5_000;

/** Where a listing resumes: backend id and that backend's resume token (null = its start). */
export interface ListCursor {
  backend: string;
  token: string | null;
  /** Past the last item: resuming yields an empty page. */
  done?: boolean;
}

export function encodeCursor(c: ListCursor): string {
  const parts: unknown[] = [c.backend, c.token];
  if (c.done) parts.push(1);
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, backends: readonly string[], argument = 'after'): ListCursor {
  const bad = (): never => {
    throw new BadUserInputError(`${argument} is not a cursor issued by this gateway for this listing`, argument);
  };
  if (cursor.length > 1200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length < 2 ||
    parsed.length > 3 ||
    typeof parsed[0] !== 'string' ||
    !(parsed[1] === null || typeof parsed[1] === 'string') ||
    (parsed.length === 3 && parsed[2] !== 1)
  ) {
    bad();
  }
  const [backend, token, done] = parsed as [string, string | null, 1 | undefined];
  if (!backends.includes(backend)) bad();
  if (token !== null) safeText(token, argument, 1000);
  return done ? { backend, token, done: true } : { backend, token };
}

export interface Edge<T> {
  node: T;
  /** Cursor that resumes after this edge. */
  cursor: string;
}

/**
 * An edge whose cursor is encoded when first read. A class, not an object literal with a getter:
 * V8 gives each such literal a hidden class of its own in old space, which keeps what the getter's
 * closure holds (the whole page) alive through every young-generation GC until a full one.
 */
class LazyEdge<T> implements Edge<T> {
  readonly node: T;
  readonly #index: number;
  readonly #cursorAt: (index: number) => string;
  #cursor: string | undefined;

  constructor(node: T, index: number, cursorAt: (index: number) => string) {
    this.node = node;
    this.#index = index;
    this.#cursorAt = cursorAt;
  }

  get cursor(): string {
    return (this.#cursor ??= this.#cursorAt(this.#index));
  }
}

/** Relay page info. */
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/** A backend a merged page does not cover. */
export interface Omission {
  backend: string;
  /** NO_CREDENTIAL: skipped, not an error. FAILED: `error` says why. */
  reason: 'NO_CREDENTIAL' | 'FAILED';
  error?: GatewayError;
  /** Index in `edges` where the backend's items would have been. */
  at: number;
}

/** Items merged across backends, with the backends left out at their places: what a merged field answers. */
export interface Merged<T> {
  items: T[];
  omissions: Omission[];
}

/** One backend's part of a merged read: its answer, or why it is left out. */
export type BackendPart<T> =
  | { backend: string; answer: T }
  | { backend: string; reason: 'NO_CREDENTIAL' }
  | { backend: string; reason: 'FAILED'; error: GatewayError };

/**
 * A backend's failure as a merged field leaves it out (FAILED), or the error rethrown when it
 * fails the whole field: the caller's own mistake (BAD_USER_INPUT, the same for every backend) and
 * anything that is not a backend's typed error.
 */
export function backendFailure(err: unknown): GatewayError {
  if (!(err instanceof GatewayError) || err.code === ErrorCode.BadUserInput) throw err;
  return err;
}

/**
 * The partial-result rule of every merged field (docs/schema.md, "Merged fields"), for reads that
 * answer each backend whole (plugins, a node's claims, a server's attachments; `mergeVolumePages`
 * pages and applies the same rule per page): every backend at once; one that requires a
 * credential the request carried none for is left out as NO_CREDENTIAL without a call; one that
 * fails is left out as FAILED with its error (`backendFailure`). Parts come in `entries`' order.
 */
export async function readEachBackend<E extends { backend: Pick<VolumeBackend, 'id' | 'requiresCredential'> }, T>(
  entries: readonly E[],
  callFor: (backend: string) => CallOptions,
  read: (entry: E, o: CallOptions) => Promise<T>,
): Promise<Array<BackendPart<T>>> {
  return Promise.all(
    entries.map(async (e): Promise<BackendPart<T>> => {
      const id = e.backend.id;
      const o = callFor(id);
      if (lacksCredential(e.backend, o.credential)) return { backend: id, reason: 'NO_CREDENTIAL' };
      try {
        return { backend: id, answer: await read(e, o) };
      } catch (err) {
        return { backend: id, reason: 'FAILED', error: backendFailure(err) };
      }
    }),
  );
}

/** The parts' items in order, each backend left out at the place its items would have had. */
export function mergeParts<T, I>(
  parts: ReadonlyArray<BackendPart<T>>,
  itemsOf: (answer: T) => readonly I[],
): Merged<I> {
  const items: I[] = [];
  const omissions: Omission[] = [];
  for (const p of parts) {
    if ('answer' in p) items.push(...itemsOf(p.answer));
    else
      omissions.push(
        p.reason === 'FAILED'
          ? { backend: p.backend, reason: 'FAILED', error: p.error, at: items.length }
          : { backend: p.backend, reason: 'NO_CREDENTIAL', at: items.length },
      );
  }
  return { items, omissions };
}

export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo;
  /** Backends left out: their items are missing from this page. */
  omissions: Omission[];
}

export interface MergedListRequest {
  /** Backends to list, in the merged order. */
  backends: VolumeBackend[];
  query: Omit<VolumeListQuery, 'limit' | 'token'>;
  /** Applied after mapping (derived fields); undefined = keep all. */
  keep?: (v: Volume) => boolean;
  first: number;
  after: ListCursor | null;
  /** Call options (the caller's credential) for each backend; a backend that requires a credential is skipped without one. */
  callFor: (backend: string) => CallOptions;
  /**
   * Longest one backend's part may take, all its pages together: past it that backend is left out
   * as FAILED (BACKEND_TIMEOUT) and the others are answered. @default {@link DEFAULT_LIST_BACKEND_DEADLINE_MS}
   */
  backendDeadlineMs?: number;
}

interface Found {
  volume: Volume;
  backend: string;
  position: string;
}

/**
 * Merges the backends' `listVolumes` pages into one connection page: each backend asked in order
 * for what is still wanted (plus one, for an exact `hasNextPage`), within its deadline.
 */
export async function mergeVolumePages(r: MergedListRequest): Promise<Connection<Volume>> {
  if (r.after?.done)
    return {
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      omissions: [],
    };
  const want = r.first + 1;
  const found: Found[] = [];
  const omissions: Omission[] = [];
  let resume: ListCursor | null = null;
  let startIndex = 0;
  if (r.after)
    startIndex = Math.max(
      0,
      r.backends.findIndex((b) => b.id === r.after!.backend),
    );

  outer: for (let i = startIndex; i < r.backends.length; i++) {
    const backend = r.backends[i]!;
    if (lacksCredential(backend, r.callFor(backend.id).credential)) {
      omissions.push({ backend: backend.id, reason: 'NO_CREDENTIAL', at: found.length });
      continue;
    }
    let token = i === startIndex && r.after ? r.after.token : null;
    const deadline = backendDeadline(
      backend.id,
      r.backendDeadlineMs ?? DEFAULT_LIST_BACKEND_DEADLINE_MS,
      r.callFor(backend.id),
    );
    try {
      for (let round = 0; ; round++) {
        if (round === MAX_ROUNDS_PER_BACKEND) {
          resume = { backend: backend.id, token };
          break outer;
        }
        let page: BackendPage<Volume>;
        try {
          // The page's fields before the spread (the query has neither): fields added after a spread
          // make V8 on Node 20 keep the object through young-generation GCs.
          page = await deadline.race(
            backend.listVolumes({ limit: want - found.length, token, ...r.query }, deadline.options),
          );
        } catch (err) {
          omissions.push({ backend: backend.id, reason: 'FAILED', error: backendFailure(err), at: found.length });
          break;
        }
        for (const { item, position } of page.items) {
          if (r.keep && !r.keep(item)) continue;
          found.push({ volume: item, backend: backend.id, position });
          if (found.length === want) break outer;
        }
        if (page.next === null) break;
        token = page.next;
      }
    } finally {
      deadline.clear();
    }
  }

  const shown = found.slice(0, r.first);
  // Edge i resumes at item i+1; the last edge at the extra item or where scanning stopped.
  const after = (i: number): ListCursor | null => {
    const next = found[i + 1];
    return next ? { backend: next.backend, token: next.position } : resume;
  };
  // Cursors are encoded when read: a query of `nodes` (or of edges without cursors) needs none.
  const cursorAt = (i: number): string =>
    encodeCursor(after(i) ?? { backend: shown[i]!.backend, token: null, done: true });
  const edges = shown.map((f, i) => new LazyEdge(f.volume, i, cursorAt));
  const next = found.length > r.first ? { backend: found[r.first]!.backend, token: found[r.first]!.position } : resume;
  return {
    edges,
    pageInfo: {
      hasNextPage: next !== null,
      hasPreviousPage: r.after !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: next ? encodeCursor(next) : (edges.at(-1)?.cursor ?? null),
    },
    // Omissions past the page's end do not concern it.
    omissions: omissions.filter((o) => o.at <= shown.length),
  };
}

/**
 * Pages a list the backend returns whole (Nomad plugins): cursor = index of the next item.
 */
export function pageArray<T>(
  items: T[],
  first: number,
  after: string | null | undefined,
): { edges: Edge<T>[]; pageInfo: PageInfo; /** Index of the page's first item. */ start: number } {
  let start = 0;
  if (after !== null && after !== undefined) {
    const m = /^o:(\d{1,7})$/.exec(Buffer.from(after, 'base64url').toString('utf8'));
    if (!m) throw new BadUserInputError('after is not a cursor issued by this gateway for this listing', 'after');
    start = Number(m[1]);
  }
  const cursorAt = (i: number): string => Buffer.from(`o:${i}`, 'utf8').toString('base64url');
  const edges = items.slice(start, start + first).map((node, i) => ({ node, cursor: cursorAt(start + i + 1) }));
  return {
    edges,
    pageInfo: {
      hasNextPage: start + first < items.length,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    start,
  };
}

/**
 * Pages a listing whose tokens the backend defines and returns in the body (Nomad snapshots and
 * external volumes: plugin-opaque tokens). Cursor = (token of a backend page, items to skip in
 * it), so every edge has an exact cursor even though the backend only names page starts.
 */
export async function pageOpaque<T>(
  fetch: (limit: number, token: string | null) => Promise<{ items: T[]; next: string | null }>,
  first: number,
  after: string | null | undefined,
): Promise<{ edges: Edge<T>[]; pageInfo: PageInfo }> {
  let token: string | null = null;
  let skip = 0;
  if (after !== null && after !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const ok =
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      (parsed[0] === null || typeof parsed[0] === 'string') &&
      Number.isInteger(parsed[1]) &&
      parsed[1] >= 0 &&
      parsed[1] <= 10_000;
    if (!ok) throw new BadUserInputError('after is not a cursor issued by this gateway for this listing', 'after');
    [token, skip] = parsed as [string | null, number];
    if (token !== null) safeText(token, 'after', 1000);
  }
  const enc = (t: string | null, s: number): string =>
    Buffer.from(JSON.stringify([t, s]), 'utf8').toString('base64url');
  const page = await fetch(skip + first, token);
  const items = page.items.slice(skip, skip + first);
  const edges = items.map((node, i) => ({ node, cursor: enc(token, skip + i + 1) }));
  // A page cut short by `first` continues inside it; one the backend ended continues at its token.
  const more = page.items.length > skip + first;
  const endCursor = more ? enc(token, skip + first) : page.next ? enc(page.next, 0) : (edges.at(-1)?.cursor ?? null);
  return {
    edges,
    pageInfo: {
      hasNextPage: more || page.next !== null,
      hasPreviousPage: after != null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor,
    },
  };
}
