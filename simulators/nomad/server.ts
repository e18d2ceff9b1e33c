/**
 * The HTTP server: Go ServeMux-style routing (hashicorp/nomad command/agent/http.go
 * `registerHandlers`), the request log, fault injection (latency, fail-next) and the `/_sim/`
 * control API.
 *
 * Routing mirrors Nomad's mux: exact patterns (`/v1/volumes`, `/v1/plugins`, …), subtree
 * patterns (`/v1/volume/csi/`, `/v1/plugin/csi/`) with Go's 301 redirect for the slash-less
 * form, path cleaning redirects, and the root fallthrough (`/` → 307 `/ui/`, anything else →
 * 404 with an empty body).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseToken, type AclStore } from './acl';
import { handleControl, type ControlTarget } from './control';
import { encodeGo } from './encode';
import { goUnescape, parseGoQuery } from './golang';
import { qget, type HandlerResult, type SimContext, type SimRequest } from './http';
import { aclTokenSelf } from './routes/acl';
import { eventStream } from './routes/events';
import { listPlugins, readPlugin } from './routes/plugins';
import { createSnapshots, deleteSnapshot, listExternalVolumes, listSnapshots } from './routes/snapshots';
import {
  createVolumes,
  deleteVolume,
  deregisterVolume,
  detachVolume,
  listHostVolumes,
  listVolumes,
  readVolume,
  registerVolumes,
} from './routes/volumes';
import { openStream, sendComplete, setMetaHeaders } from './server-io';
import type { SimState } from './state';
import { Sleeps } from '../common/sleeps';
import { readBody } from '../common/read-body';

/** One request as received (control API excluded). */
export interface RequestLogEntry {
  method: string;
  /** The raw pathname, not decoded, without the query. */
  path: string;
  /** Exactly as received, including the query. */
  rawPath: string;
  query: Record<string, string[]>;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The ACL secret the request carried (X-Nomad-Token or Bearer), if any. */
  token?: string;
  body: string;
  /** Response status; 0 while the request is still in flight. */
  status: number;
}

/** A queued failure for `failNext`. */
export interface FaultSpec {
  count: number;
  status: number;
  body: string;
  method?: string;
  pathPrefix?: string;
}

export interface SimServerOptions {
  state: SimState;
  acl: AclStore;
  region: string;
  eventHeartbeatMs: number;
  compression: boolean;
  control: ControlTarget;
}

const TEXT = 'text/plain; charset=utf-8';
const INVALID_METHOD = 'Invalid method';
const NOT_FOUND = 'resource not found';

/** Go's `path.Clean` plus ServeMux's trailing-slash rule. */
function cleanPath(p: string): string {
  if (p === '') return '/';
  if (p[0] !== '/') p = '/' + p;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  let np = '/' + out.join('/');
  if (p.endsWith('/') && np !== '/') np += '/';
  return np;
}

export class SimServer {
  private server: http.Server | null = null;
  private readonly log: RequestLogEntry[] = [];
  private latencyMs = 0;
  private accepted = 0;
  private readonly faults: FaultSpec[] = [];
  private readonly streams = new Set<() => void>();
  private readonly sleeps = new Sleeps();
  private closing = false;
  readonly ctx: SimContext;
  url = '';

  constructor(private readonly opts: SimServerOptions) {
    this.ctx = {
      state: opts.state,
      acl: opts.acl,
      region: opts.region,
      eventHeartbeatMs: opts.eventHeartbeatMs,
      trackStream: (end) => {
        this.streams.add(end);
        return () => this.streams.delete(end);
      },
    };
  }

  listen(port: number, host: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const server = http.createServer((req, res) => {
        this.handle(req, res).catch((e: unknown) => {
          if (!res.headersSent) {
            res.statusCode = 500;
            res.setHeader('Content-Type', TEXT);
            res.end(`simulator error: ${(e as Error).message}`);
          } else res.destroy();
        });
      });
      server.on('connection', () => this.accepted++);
      server.once('error', reject);
      server.listen(port, host, () => {
        const addr = server.address() as AddressInfo;
        const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        this.url = `http://${h}:${addr.port}`;
        this.server = server;
        resolve(this.url);
      });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const end of [...this.streams]) end();
    this.sleeps.wakeAll();
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Ends every open event stream (a server restart or leader change, as clients see it). */
  closeStreams(): number {
    const ends = [...this.streams];
    for (const end of ends) end();
    return ends.length;
  }

  requests(): RequestLogEntry[] {
    return this.log.map((e) => ({ ...e, query: { ...e.query }, headers: { ...e.headers } }));
  }

  clearRequests(): void {
    this.log.length = 0;
  }

  /** TCP connections accepted since listen (control API connections included). */
  connectionsAccepted(): number {
    return this.accepted;
  }

  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  failNext(f: FaultSpec): void {
    if (f.count > 0) this.faults.push({ ...f });
  }

  private sleep(ms: number): Promise<void> {
    return this.sleeps.sleep(ms);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
    const body = await readBody(req);

    if (rawPath === '/_sim' || rawPath.startsWith('/_sim/')) {
      const r = handleControl(
        this.opts.control,
        req.method ?? 'GET',
        rawPath.slice('/_sim'.length),
        body.toString('utf8'),
      );
      res.statusCode = r.status;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(r.body, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
      return;
    }

    const query = parseGoQuery(rawQuery);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    const token = parseToken(req.headers);
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: rawPath,
      rawPath: rawUrl,
      query: Object.fromEntries(query),
      headers,
      ...(token !== '' ? { token } : {}),
      body: body.toString('utf8'),
      status: 0,
    };
    this.log.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
    });

    if (this.latencyMs > 0) await this.sleep(this.latencyMs);
    if (this.closing) {
      res.destroy();
      return;
    }

    const method = entry.method;
    const fault = this.faults.find(
      (f) =>
        f.count > 0 &&
        (!f.method || f.method.toUpperCase() === method) &&
        (!f.pathPrefix || rawPath.startsWith(f.pathPrefix)),
    );
    if (fault) {
      fault.count--;
      if (fault.count <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      sendComplete(req, res, fault.status, TEXT, fault.body, this.opts.compression);
      return;
    }

    const path = goUnescape(rawPath, false);
    if (path === null) {
      // net/http rejects request URIs with invalid escapes before any handler runs.
      res.setHeader('Connection', 'close');
      sendComplete(req, res, 400, TEXT, '400 Bad Request', false);
      return;
    }
    const cleaned = cleanPath(path);
    if (cleaned !== path) return this.redirect(req, res, 301, cleaned + (rawQuery ? '?' + rawQuery : ''));

    const sreq: SimRequest = {
      method,
      path,
      query,
      headers: req.headers,
      body,
      hasBody: hasBody(req),
      token,
      raw: req,
      res,
    };
    const result = await this.route(sreq, rawQuery);
    if (result) this.write(sreq, result);
    if (res.headersSent) entry.status = res.statusCode;
  }

  /** Returns null when the response was already written (redirects, streams). */
  private async route(req: SimRequest, rawQuery: string): Promise<HandlerResult | null> {
    const ctx = this.ctx;
    const m = req.method;
    switch (req.path) {
      case '/v1/volumes':
        if (m === 'GET' || m === 'HEAD') {
          if (!req.query.has('type')) return { kind: 'json', value: [] };
          const type = qget(req, 'type');
          if (type === 'csi') return listVolumes(ctx, req);
          if (type === 'host') return listHostVolumes(ctx, req);
          return { kind: 'error', status: 404, text: NOT_FOUND };
        }
        if (m === 'PUT' || m === 'POST') return registerVolumes(ctx, req);
        return { kind: 'error', status: 405, text: INVALID_METHOD };
      case '/v1/volumes/external':
        if (m !== 'GET') return { kind: 'error', status: 405, text: INVALID_METHOD };
        return listExternalVolumes(ctx, req);
      case '/v1/volumes/snapshot':
        if (m === 'PUT' || m === 'POST') return createSnapshots(ctx, req);
        if (m === 'DELETE') return deleteSnapshot(ctx, req);
        if (m === 'GET') return listSnapshots(ctx, req);
        return { kind: 'error', status: 405, text: INVALID_METHOD };
      case '/v1/plugins':
        if (m !== 'GET') return { kind: 'error', status: 405, text: INVALID_METHOD };
        if (!req.query.has('type')) return { kind: 'json', value: [] };
        if (qget(req, 'type') !== 'csi') return { kind: 'empty' };
        return listPlugins(ctx, req);
      case '/v1/event/stream': {
        if (m !== 'GET') return { kind: 'error', status: 405, text: INVALID_METHOD };
        const r = eventStream(ctx, req, () =>
          openStream(
            req.raw,
            req.res,
            { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' },
            this.opts.compression,
          ),
        );
        return r.kind === 'streamed' ? null : r;
      }
      case '/v1/acl/token/self':
        return aclTokenSelf(ctx, req);
      case '/v1/status/leader':
        if (m !== 'GET') return { kind: 'error', status: 405, text: INVALID_METHOD };
        return { kind: 'json', value: '127.0.0.1:4647' };
      case '/v1/volume/csi':
      case '/v1/plugin/csi':
        this.redirect(req.raw, req.res, 301, req.path + '/' + (rawQuery ? '?' + rawQuery : ''));
        return null;
      case '/':
        this.redirect(req.raw, req.res, 307, '/ui/' + (rawQuery ? '?' + rawQuery : ''));
        return null;
    }
    if (req.path.startsWith('/v1/volume/csi/')) {
      const tokens = req.path.slice('/v1/volume/csi/'.length).split('/');
      const id = tokens[0]!;
      if (tokens.length === 1) {
        if (m === 'GET') return readVolume(ctx, req, id);
        if (m === 'PUT') return registerVolumes(ctx, req);
        if (m === 'DELETE') return deregisterVolume(ctx, req, id);
        return { kind: 'error', status: 405, text: INVALID_METHOD };
      }
      if (tokens.length === 2) {
        if (m === 'PUT') {
          if (tokens[1] === 'create') return createVolumes(ctx, req);
        } else if (m === 'DELETE') {
          if (tokens[1] === 'detach') return detachVolume(ctx, req, id);
          if (tokens[1] === 'delete') return deleteVolume(ctx, req, id);
        } else {
          return { kind: 'error', status: 405, text: INVALID_METHOD };
        }
      }
      return { kind: 'error', status: 404, text: NOT_FOUND };
    }
    if (req.path.startsWith('/v1/plugin/csi/')) {
      if (m !== 'GET') return { kind: 'error', status: 405, text: INVALID_METHOD };
      const tokens = req.path.slice('/v1/plugin/csi/'.length).split('/');
      if (tokens.length > 2) return { kind: 'error', status: 404, text: NOT_FOUND };
      return readPlugin(ctx, req, tokens[0]!);
    }
    // Root fallthrough: 404 with no body.
    return { kind: 'empty', status: 404 };
  }

  private write(req: SimRequest, r: HandlerResult): void {
    const res = req.res;
    if (res.headersSent || res.writableEnded) return;
    const compression = this.opts.compression;
    switch (r.kind) {
      case 'json': {
        if (r.meta) setMetaHeaders(res, r.meta);
        const pretty = isPretty(req);
        sendComplete(
          req.raw,
          res,
          200,
          'application/json',
          encodeGo(r.value, pretty) + (pretty ? '\n' : ''),
          compression,
        );
        return;
      }
      case 'empty':
        if (r.meta) setMetaHeaders(res, r.meta);
        sendComplete(req.raw, res, r.status ?? 200, null, null, compression);
        return;
      case 'error':
        if (r.meta) setMetaHeaders(res, r.meta);
        sendComplete(req.raw, res, r.status, TEXT, r.text, compression);
        return;
      case 'streamed':
        return;
    }
  }

  /** `http.Redirect`: HTML body only for GET/HEAD. */
  private redirect(req: http.IncomingMessage, res: http.ServerResponse, code: 301 | 307, location: string): void {
    res.setHeader('Location', location);
    const text = code === 301 ? 'Moved Permanently' : 'Temporary Redirect';
    if (req.method === 'GET' || req.method === 'HEAD') {
      const href = location
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&#34;')
        .replace(/'/g, '&#39;');
      sendComplete(
        req,
        res,
        code,
        'text/html; charset=utf-8',
        `<a href="${href}">${text}</a>.\n\n`,
        this.opts.compression,
      );
    } else {
      sendComplete(req, res, code, null, null, this.opts.compression);
    }
  }
}

/** `?pretty` (any value except "0"). */
function isPretty(req: SimRequest): boolean {
  const v = req.query.get('pretty');
  return v !== undefined && (v[0] === undefined || v[0] === '' || v[0] !== '0');
}

/** Go gives handlers `http.NoBody` when there is no Content-Length > 0 and no chunked body. */
function hasBody(req: http.IncomingMessage): boolean {
  const te = req.headers['transfer-encoding'];
  if (te !== undefined && te !== '') return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && cl !== '0';
}
