/**
 * The three HTTP servers (one port per service, as in a real cloud) and what they share: the
 * request log, injected latency and outages, and the `/_sim/` control API, which every port
 * answers and which is never logged, delayed or failed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestId } from '../ids';
import { outageApplies, outageExhausted, toOutage, unavailableResponse, type Outage, type OutageSpec } from './outage';
import { RequestLog } from './request-log';
import { parseQuery, SERVICES, type Service, type SimRequest, type SimResponse } from './types';
import { Sleeps } from '../../common/sleeps';
import { readBody } from '../../common/read-body';

export type Handler = (req: SimRequest) => Promise<SimResponse> | SimResponse;

export interface ControlResult {
  status: number;
  body: unknown;
}

export type ControlHandler = (method: string, path: string, body: string) => Promise<ControlResult> | ControlResult;

/** Microversion header a service reads (logged verbatim). */
const MICROVERSION_HEADERS: Record<Service, string[]> = {
  keystone: [],
  cinder: ['openstack-api-version'],
  nova: ['openstack-api-version', 'x-openstack-nova-api-version'],
};

export class HttpFront {
  readonly log = new RequestLog();
  private readonly servers = new Map<Service, http.Server>();
  private readonly latency = new Map<Service | '*', number>();
  private readonly outages = new Map<Service, Outage>();
  private readonly sleeps = new Sleeps();
  private closing = false;

  constructor(
    private readonly handlers: Record<Service, Handler>,
    private readonly control: ControlHandler,
  ) {}

  /** Starts the three servers; resolves with each base URL (scheme://host:port). */
  async listen(host: string, ports: Partial<Record<Service, number>>): Promise<Record<Service, string>> {
    const urls = {} as Record<Service, string>;
    for (const service of SERVICES) urls[service] = await this.start(service, host, ports[service] ?? 0);
    return urls;
  }

  private start(service: Service, host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const server = http.createServer((req, res) => {
        this.handle(service, req, res).catch((e: unknown) => {
          if (res.headersSent) {
            res.destroy();
            return;
          }
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(`simulator error: ${(e as Error).stack ?? String(e)}`);
        });
      });
      server.once('error', reject);
      server.listen(port, host, () => {
        const addr = server.address() as AddressInfo;
        const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        this.servers.set(service, server);
        resolve(`http://${h}:${addr.port}`);
      });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.sleeps.wakeAll();
    await Promise.all(
      [...this.servers.values()].map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
    this.servers.clear();
  }

  /** Adds `ms` before every answer of `service` (all services when omitted). */
  setLatency(ms: number, service?: Service): void {
    this.latency.set(service ?? '*', Math.max(0, ms));
  }

  setOutage(spec: OutageSpec): void {
    this.outages.set(spec.service, toOutage(spec, Date.now()));
  }

  clearOutage(service?: Service): void {
    if (service) this.outages.delete(service);
    else this.outages.clear();
  }

  private sleep(ms: number): Promise<void> {
    return this.sleeps.sleep(ms);
  }

  private async handle(service: Service, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = Date.now();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
    const body = await readBody(req);
    const method = req.method ?? 'GET';

    if (path === '/_sim' || path.startsWith('/_sim/')) {
      const r = await this.control(method, path.slice('/_sim'.length), body.toString('utf8'));
      const text = JSON.stringify(r.body ?? null);
      res.writeHead(r.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }

    const query = parseQuery(rawQuery);
    const mvHeader = MICROVERSION_HEADERS[service].map((h) => req.headers[h]).find((v) => v !== undefined);
    const entry = this.log.add({
      service,
      method,
      path,
      query: rawQuery,
      params: groupQuery(query),
      ...actionName(method, path, body),
      status: 0,
      microversion: mvHeader === undefined ? null : Array.isArray(mvHeader) ? mvHeader.join(', ') : mvHeader,
      time: new Date(started).toISOString(),
      durationMs: 0,
    });

    const delay = this.latency.get(service) ?? this.latency.get('*') ?? 0;
    if (delay > 0) await this.sleep(delay);
    if (this.closing) {
      res.destroy();
      return;
    }

    let out: SimResponse;
    const outage = this.outages.get(service);
    if (outage && outageApplies(outage, Date.now())) {
      if (outageExhausted(outage, Date.now())) this.outages.delete(service);
      out = unavailableResponse(service, outage.style);
    } else {
      if (outage && outageExhausted(outage, Date.now())) this.outages.delete(service);
      const te = req.headers['transfer-encoding'];
      const cl = req.headers['content-length'];
      out = await this.handlers[service]({
        service,
        method,
        path,
        rawQuery,
        query,
        headers: req.headers,
        body,
        hasBody: (te !== undefined && te !== '') || (cl !== undefined && cl !== '0'),
        requestId: requestId(),
        base: `http://${req.headers.host ?? 'localhost'}`,
      });
    }
    if (this.closing) {
      res.destroy();
      return;
    }
    const payload = out.body ?? '';
    const headers: Record<string, string | string[] | number> = { ...out.headers };
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-length'))
      headers['Content-Length'] = Buffer.byteLength(payload);
    if (out.statusText) res.writeHead(out.status, out.statusText, headers);
    else res.writeHead(out.status, headers);
    res.end(payload);
    entry.status = out.status;
    entry.durationMs = Date.now() - started;
  }
}

function groupQuery(pairs: Array<[string, string]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of pairs) (out[k] ??= []).push(v);
  return out;
}

/** The action name of a `POST …/action` body (its single top-level key), for the log. */
function actionName(method: string, path: string, body: Buffer): { action?: string } {
  if (method !== 'POST' || !path.endsWith('/action')) return {};
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const name =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? Object.keys(parsed)[0] : undefined;
    return name === undefined ? {} : { action: name };
  } catch {
    return {};
  }
}
