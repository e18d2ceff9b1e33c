/**
 * GET /v2.1/servers/{id}/os-instance-actions and …/{request_id} (nova-26/05–06; Nova 26's
 * instance_actions.py, its view and query schemas, policies `list`/`show` project reader or
 * admin, `events` and `events:details` admin):
 * - actions newest first: `action, instance_uuid, request_id, user_id, project_id, start_time,
 *   message`, plus `updated_at` from 2.58;
 * - events only for admins before 2.51, for everyone from 2.51 (newest first): `event,
 *   start_time, finish_time, result`, then `traceback` (admin), `host` (admin, 2.62), `hostId`
 *   (2.62, sha224 of the action's project and the host), `details` (admin, 2.84);
 * - from 2.58 the list takes `limit`, `marker` (a request id), `changes-since` and, from 2.66,
 *   `changes-before` (inclusive bounds on `updated_at`), nothing else, and links the next page
 *   when it is full; before 2.58 the query is ignored;
 * - from 2.21 a deleted server's actions stay readable.
 */
import { cinderTime } from '../clock';
import { ApiError } from '../http/fault';
import { atLeast } from '../http/microversion';
import { segments } from '../http/types';
import { pyRepr, pyStr, urlencode } from '../pyjson';
import { can, getInstance, type NovaCtx, type NovaResult } from './context';
import type { ActionInstance, InstanceAction, InstanceActionEvent } from './instance-actions';
import { hostIdOf } from './servers';

const POLICY = 'os_compute_api:os-instance-actions';
/** `CONF.api.max_limit`. */
const MAX_LIMIT = 1000;

/** `_get_instance`: read_deleted='yes' from 2.21; another project's server is not found. */
function actionInstance(ctx: NovaCtx): ActionInstance {
  const id = ctx.params.id!;
  if (ctx.state.servers.has(id)) {
    const s = getInstance(ctx, id);
    return { id: s.id, projectId: s.projectId, deleted: false };
  }
  const rec = ctx.state.instanceActions.instance(id);
  if (rec?.deleted && atLeast(ctx.mv, '2.21') && (ctx.auth.isAdmin || rec.projectId === ctx.auth.projectId)) return rec;
  throw new ApiError(404, `Instance ${id} could not be found.`);
}

function actionView(ctx: NovaCtx, a: InstanceAction): Record<string, unknown> {
  const out: Record<string, unknown> = {
    action: a.action,
    instance_uuid: a.instanceUuid,
    request_id: a.requestId,
    user_id: a.userId,
    project_id: a.projectId,
    start_time: cinderTime(a.startTime),
    message: a.message,
  };
  if (atLeast(ctx.mv, '2.58')) out.updated_at = cinderTime(a.updatedAt);
  return out;
}

interface EventVisibility {
  traceback: boolean;
  host: boolean;
  hostId: boolean;
  details: boolean;
}

function eventView(e: InstanceActionEvent, projectId: string, show: EventVisibility): Record<string, unknown> {
  const out: Record<string, unknown> = {
    event: e.event,
    start_time: cinderTime(e.startTime),
    finish_time: cinderTime(e.finishTime),
    result: e.result,
  };
  if (show.traceback) out.traceback = e.traceback;
  if (show.host) out.host = e.host;
  if (show.hostId) out.hostId = hostIdOf(projectId, e.host);
  if (show.details) out.details = e.details;
  return out;
}

/** `timeutils.parse_isotime` (iso8601) to µs since the epoch, UTC when naive; null if invalid. */
export function parseIsoMicros(s: string): number | null {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h = '0', mi = '0', sec = '0'] = m.slice(1, 7);
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  const date = new Date(ms);
  if (
    Number.isNaN(ms) ||
    date.getUTCDate() !== Number(d) ||
    date.getUTCMonth() !== Number(mo) - 1 ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(sec) > 59
  )
    return null;
  const micros = Number((m[7] ?? '').padEnd(6, '0').slice(0, 6));
  let offsetMin = 0;
  const tz = m[8];
  if (tz !== undefined && tz !== 'Z') {
    const digits = tz.slice(1).replace(':', '');
    offsetMin = (tz[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0'));
  }
  return (ms - offsetMin * 60_000) * 1000 + micros;
}

interface ListQuery {
  limit?: number;
  marker?: string;
  since?: number;
  before?: number;
}

function queryError(key: string, value: unknown, message: string): ApiError {
  return new ApiError(400, `Invalid input for query parameters ${key}. Value: ${pyStr(value)}. ${message}`);
}

/** The 2.58 / 2.66 query schema (`additionalProperties: false`, each parameter at most once). */
function listQuery(ctx: NovaCtx): ListQuery {
  const allowed = ['limit', 'marker', 'changes-since', ...(atLeast(ctx.mv, '2.66') ? ['changes-before'] : [])];
  const keys = [...new Set(ctx.req.query.map(([k]) => k))];
  const extra = keys.filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw new ApiError(
      400,
      `Additional properties are not allowed (${extra.map(pyRepr).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  const out: ListQuery = {};
  for (const key of allowed) {
    const values = ctx.req.query.filter(([k]) => k === key).map(([, v]) => v);
    if (values.length === 0) continue;
    if (values.length > 1) throw queryError(key, values, `${pyRepr(values)} is too long`);
    const v = values[0]!;
    if (key === 'limit') {
      if (v === '') throw queryError(key, v, "'' is too short");
      if (!/^[0-9]*$/.test(v)) throw queryError(key, v, `${pyRepr(v)} does not match '^[0-9]*$'`);
      out.limit = Number(v);
    } else if (key === 'marker') {
      out.marker = v;
    } else {
      const t = parseIsoMicros(v);
      if (t === null) throw queryError(key, v, `${pyRepr(v)} is not a 'date-time'`);
      if (key === 'changes-since') out.since = t;
      else out.before = t;
    }
  }
  if (out.since !== undefined && out.before !== undefined && out.before < out.since) {
    throw new ApiError(400, 'The value of changes-since must be less than or equal to changes-before.');
  }
  return out;
}

/** `actions_get`: filters on `updated_at` (null never matches), the marker by request id (filters ignored), then the limit. */
function page(ctx: NovaCtx, inst: ActionInstance, q: ListQuery): InstanceAction[] {
  const store = ctx.state.instanceActions;
  let list = store.list(inst.id);
  if (q.since !== undefined) list = list.filter((a) => a.updatedAt !== null && a.updatedAt >= q.since!);
  if (q.before !== undefined) list = list.filter((a) => a.updatedAt !== null && a.updatedAt <= q.before!);
  if (q.marker !== undefined) {
    const m = store.byRequestId(inst.id, q.marker);
    // db actions_get reassigns `marker` to the lookup's result before raising: hence "None".
    if (!m) throw new ApiError(400, 'Marker None could not be found.');
    list = list.filter((a) => a.startTime < m.startTime || (a.startTime === m.startTime && a.seq < m.seq));
  }
  return list.slice(0, Math.min(MAX_LIMIT, q.limit ?? MAX_LIMIT));
}

/** `_get_collection_links`: a next link when the page holds exactly `min(limit, max_limit)` items. */
function nextLinks(ctx: NovaCtx, actions: InstanceAction[]): unknown[] | undefined {
  const limitParam = ctx.req.query.find(([k]) => k === 'limit')?.[1];
  const maxItems = Math.min(limitParam === undefined ? MAX_LIMIT : Number(limitParam), MAX_LIMIT);
  const last = actions[actions.length - 1];
  if (!maxItems || maxItems !== actions.length || !last) return undefined;
  // `_get_next_link`: the request's parameters sorted by name, `marker` set to the last request id.
  const params = new Map<string, string>();
  // (Each parameter appears once: the query schema refused repeats.)
  for (const [k, v] of [...ctx.req.query].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) params.set(k, v);
  params.set('marker', last.requestId);
  const project = segments(ctx.req.path)[1];
  const prefix = `${ctx.req.base}/v2.1${project !== undefined && /^[0-9a-f]{32}$/.test(project) ? `/${project}` : ''}`;
  return [{ rel: 'next', href: `${prefix}/servers/${ctx.params.id}/os-instance-actions?${urlencode([...params])}` }];
}

export function listInstanceActions(ctx: NovaCtx): NovaResult {
  const paged = atLeast(ctx.mv, '2.58');
  const q = paged ? listQuery(ctx) : {};
  const inst = actionInstance(ctx);
  can(ctx, `${POLICY}:list`, 'reader');
  const actions = paged ? page(ctx, inst, q) : ctx.state.instanceActions.list(inst.id);
  const body: Record<string, unknown> = { instanceActions: actions.map((a) => actionView(ctx, a)) };
  const links = paged ? nextLinks(ctx, actions) : undefined;
  if (links) body.links = links;
  return { status: 200, body };
}

export function showInstanceAction(ctx: NovaCtx): NovaResult {
  const inst = actionInstance(ctx);
  can(ctx, `${POLICY}:show`, 'reader');
  const reqId = ctx.params.requestId!;
  const a = ctx.state.instanceActions.byRequestId(inst.id, reqId);
  if (!a) throw new ApiError(404, `Action ${reqId} not found`);
  const out = actionView(ctx, a);
  // Policy `events` (admin) shows every event field at every microversion; from 2.51 the
  // project's users see events without traceback/host; `details` needs `events:details` (admin).
  const admin = ctx.auth.isAdmin;
  if (admin || atLeast(ctx.mv, '2.51')) {
    const show: EventVisibility = {
      traceback: admin,
      host: admin && atLeast(ctx.mv, '2.62'),
      hostId: atLeast(ctx.mv, '2.62'),
      details: admin && atLeast(ctx.mv, '2.84'),
    };
    out.events = [...a.events].reverse().map((e) => eventView(e, a.projectId || inst.projectId, show));
  }
  return { status: 200, body: { instanceAction: out } };
}
