/**
 * Cinder list parameters (cinder/api/common.py): pagination (`limit`, `marker`, `offset`),
 * sorting (`sort` or legacy `sort_key`/`sort_dir`), `with_count`, `all_tenants`, the filter
 * allow-lists of etc/cinder/resource_filters.json (rejected from 3.31, like-filters from 3.34,
 * time comparisons from 3.60) and the `<collection>_links` next-link rule.
 */
import { parseTime } from '../clock';
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import { pyBool, pyStr, urlencode } from '../pyjson';
import { asObject, type CinderCtx } from './context';

/** Cinder's `osapi_max_limit`. */
export const MAX_LIMIT = 1000;

export type Getter<T> = (t: T) => unknown;

export interface ListSpec<T> {
  /** Filters a non-admin may use (resource_filters.json). */
  allowed: readonly string[];
  /** Filter and sort fields by API name. */
  fields: Record<string, Getter<T>>;
  /** Dict-valued filters matched as subsets (metadata, glance_metadata). */
  dictFields?: Record<string, (t: T) => Record<string, string> | null>;
  /** Whether `with_count` is supported (≥ 3.45). */
  countable: boolean;
  /** The 404 message for an unknown marker. */
  markerNotFound: (marker: string) => string;
}

export interface ListResult<T> {
  page: T[];
  /** Total matching items (before pagination). */
  count: number;
  /** The effective limit (explicit or MAX_LIMIT). */
  limit: number;
  showCount: boolean;
  allTenants: boolean;
}

const PAGING_KEYS = ['marker', 'limit', 'offset', 'sort', 'sort_key', 'sort_dir'];

function first(pairs: Array<[string, string]>, key: string): string | undefined {
  return pairs.find(([k]) => k === key)?.[1];
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return MAX_LIMIT;
  if (!/^\s*[-+]?\d+\s*$/.test(raw)) throw new ApiError(400, 'limit param must be an integer');
  const n = Number(raw);
  if (n < 0) throw new ApiError(400, 'limit param must be positive');
  return Math.min(n, MAX_LIMIT);
}

function parseOffset(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^\s*[-+]?\d+\s*$/.test(raw)) throw new ApiError(400, 'Invalid input received: offset must be an integer.');
  const n = Number(raw);
  if (n < 0) throw new ApiError(400, 'Invalid input received: offset must be >= 0');
  return n;
}

/** `[key, dir][]` from `sort` or `sort_key`/`sort_dir`, with created_at/id tie-breakers. */
function parseSort(pairs: Array<[string, string]>): Array<[string, 'asc' | 'desc']> {
  const sort = first(pairs, 'sort');
  const sortKey = first(pairs, 'sort_key');
  const sortDir = first(pairs, 'sort_dir');
  if (sort !== undefined && (sortKey !== undefined || sortDir !== undefined)) {
    throw new ApiError(
      400,
      "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
    );
  }
  const out: Array<[string, string]> = [];
  if (sort !== undefined) {
    for (const part of sort.split(',')) {
      const [k, d] = part.trim().split(':', 2);
      if (k) out.push([k.trim(), (d ?? 'desc').trim()]);
    }
  } else if (sortKey !== undefined) {
    const dirs = (sortDir ?? 'desc').split(',');
    sortKey.split(',').forEach((k, i) => out.push([k.trim(), (dirs[i] ?? dirs[0] ?? 'desc').trim()]));
  }
  for (const [, d] of out)
    if (d !== 'asc' && d !== 'desc')
      throw new ApiError(400, "Invalid input received: Unknown sort direction, must be 'desc' or 'asc'");
  const dir = (out[0]?.[1] ?? 'desc') as 'asc' | 'desc';
  const keys = out as Array<[string, 'asc' | 'desc']>;
  if (!keys.some(([k]) => k === 'created_at')) keys.push(['created_at', dir]);
  if (!keys.some(([k]) => k === 'id')) keys.push(['id', dir]);
  return keys;
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return pyStr(a) < pyStr(b) ? -1 : 1;
}

/** Parses `{"k": "v"}` or a Python literal `{'k': 'v'}`. */
function parseDict(raw: string): Record<string, string> | undefined {
  for (const candidate of [raw, raw.replace(/'/g, '"')]) {
    try {
      const o = asObject(JSON.parse(candidate));
      if (o) return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
    } catch {
      // try the next spelling
    }
  }
  return undefined;
}

/** `gt:2020-01-01T00:00:00,lte:…` (≥ 3.60). */
function matchTime(value: unknown, spec: string): boolean {
  const t = typeof value === 'number' ? value : null;
  for (const part of spec.split(',')) {
    const m = /^(gt|gte|eq|neq|lt|lte):(.+)$/.exec(part.trim());
    const when = m ? parseTime(m[2]!) : parseTime(part.trim());
    if (when === null) throw new ApiError(400, `Invalid input received: Invalid filter value ${spec}`);
    if (t === null) return false;
    const op = m?.[1] ?? 'eq';
    const ok = { gt: t > when, gte: t >= when, eq: t === when, neq: t !== when, lt: t < when, lte: t <= when }[op];
    if (!ok) return false;
  }
  return true;
}

function matches<T>(ctx: CinderCtx, spec: ListSpec<T>, item: T, key: string, raw: string): boolean {
  const like = key.endsWith('~');
  const name = like ? key.slice(0, -1) : key;
  const dict = spec.dictFields?.[name];
  if (dict) {
    const want = parseDict(raw);
    if (!want) throw new ApiError(400, `Invalid input received: Invalid filter value ${raw}`);
    const have = dict(item) ?? {};
    return Object.entries(want).every(([k, v]) => have[k] === v);
  }
  const get = spec.fields[name];
  if (!get) return true; // columns the simulator does not model filter nothing
  const value = get(item);
  if ((name === 'created_at' || name === 'updated_at') && atLeast(ctx.mv, '3.60')) return matchTime(value, raw);
  if (like) return value !== null && value !== undefined && pyStr(value).toLowerCase().includes(raw.toLowerCase());
  if (typeof value === 'boolean') {
    const b = pyBool(raw);
    if (b === undefined)
      throw new ApiError(400, `Invalid input received: '${raw}' is not a valid boolean value for ${name}`);
    return value === b;
  }
  if (typeof value === 'number') return value === Number(raw);
  return pyStr(value) === raw;
}

/**
 * Applies a list request to `visible` (items the caller may see, before `all_tenants`
 * narrowing by `inProject`). Throws Cinder's 400/404s.
 */
export function listItems<T extends { id: string }>(
  ctx: CinderCtx,
  visible: T[],
  spec: ListSpec<T>,
  inProject: (t: T) => boolean,
): ListResult<T> {
  const pairs = ctx.req.query;
  const limit = parseLimit(first(pairs, 'limit'));
  const offset = parseOffset(first(pairs, 'offset'));
  const marker = first(pairs, 'marker');
  const sortKeys = parseSort(pairs);
  const filters: Array<[string, string]> = [];
  let showCount = false;
  for (const [k, v] of pairs) {
    if (PAGING_KEYS.includes(k)) continue;
    if (k === 'with_count' && spec.countable && atLeast(ctx.mv, '3.45')) {
      showCount = pyBool(v) ?? false;
      continue;
    }
    if (!filters.some(([fk]) => fk === k)) filters.push([k, v]);
  }
  const isAdmin = ctx.auth.isAdmin;
  let allTenants = false;
  const kept: Array<[string, string]> = [];
  const invalid: string[] = [];
  for (const [k, v] of filters) {
    if (k === 'all_tenants') {
      if (isAdmin) allTenants = pyBool(v) ?? v !== '';
      continue; // non-admins: silently dropped (bug #1917574)
    }
    if (isAdmin) {
      kept.push([k, v]);
      continue;
    }
    const likeOk = atLeast(ctx.mv, '3.34');
    const allowed = likeOk ? spec.allowed.includes(k) || spec.allowed.includes(`${k}~`) : spec.allowed.includes(k);
    if (allowed) kept.push([k, v]);
    else invalid.push(k);
  }
  if (invalid.length > 0 && atLeast(ctx.mv, '3.31'))
    throw new ApiError(400, `Invalid filters ${invalid.join(',')} are found in query options.`);
  const scoped = allTenants ? visible : visible.filter(inProject);
  const filtered = scoped.filter((item) => kept.every(([k, v]) => matches(ctx, spec, item, k, v)));
  const getters = sortKeys.map(([k, d]) => {
    const get = spec.fields[k === 'name' ? 'name' : k];
    if (!get) throw new ApiError(400, 'Invalid input received: Invalid sort key');
    return [get, d === 'asc' ? 1 : -1] as const;
  });
  const order = (a: T, b: T): number => {
    for (const [get, sign] of getters) {
      const c = compareValues(get(a), get(b));
      if (c !== 0) return c * sign;
    }
    return 0;
  };
  let sorted = [...filtered].sort(order);
  if (marker !== undefined) {
    const m = visible.find((x) => x.id === marker);
    if (!m) throw new ApiError(404, spec.markerNotFound(marker));
    sorted = sorted.filter((x) => order(x, m) > 0);
  }
  return { page: sorted.slice(offset, offset + limit), count: filtered.length, limit, showCount, allTenants };
}

/**
 * `<collection>_links`: emitted when the page is non-empty and limit ≤ the number of items
 * returned (or ≤ the total count with `with_count`), so a full last page still gets one.
 */
export function nextLinks(
  ctx: CinderCtx,
  collection: string,
  r: ListResult<{ id: string }>,
): Array<{ rel: string; href: string }> | undefined {
  const last = r.page[r.page.length - 1];
  const itemCount = r.showCount && r.count > 0 ? r.count : r.page.length;
  if (!last || r.limit > itemCount) return undefined;
  const params = ctx.req.query.filter(([k]) => k !== 'marker');
  params.push(['marker', last.id]);
  return [{ rel: 'next', href: `${ctx.req.base}/v3/${ctx.auth.projectId ?? ''}/${collection}?${urlencode(params)}` }];
}

/** `{<key>: [...], <key>_links?: [...], count?: n}` for a list answer. */
export function listBody<T extends { id: string }>(
  ctx: CinderCtx,
  key: string,
  collection: string,
  r: ListResult<T>,
  render: (t: T) => unknown,
): Record<string, unknown> {
  const body: Record<string, unknown> = { [key]: r.page.map(render) };
  const links = nextLinks(ctx, collection, r);
  if (links) body[`${key}_links`] = links;
  if (r.showCount) body.count = r.count;
  return body;
}
