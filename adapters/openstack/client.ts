/**
 * OpenStack HTTP client: the caller's Keystone session, endpoint from the catalog, negotiated
 * microversion header, JSON bodies and error mapping around the shared transport (one pool per
 * origin: Keystone, Cinder and Nova usually live on different ports or hosts). The request
 * functions in `cinder/requests.ts` and `nova/requests.ts` call `call()`; nothing else talks to
 * Cinder or Nova.
 */
import type { CallOptions, ProbeCall } from '../contract/call-options';
import { BreakerBoard, type Breaker } from '../contract/breaker';
import { BackendError } from '../contract/errors';
import { Transport, type HttpRequest, type HttpResponse } from '../http/transport';
import type { CallRecord } from '../contract/module';
import { errorFromResponse, tooOld } from './errors';
import { Keystone } from './keystone/client';
import type { ServiceAuth } from './keystone/requests';
import type { Session } from './keystone/results';
import { KNOWN_MAX, Microversion, rangeFromVersionDocument } from './microversions';

export type ApiService = 'volume' | 'compute';

/** Where in the catalog the client looks unless told; the backend's `region` and `interface` settings take their defaults from here. */
export const CATALOG_DEFAULTS = Object.freeze({ region: 'RegionOne', interface: 'public' } as const);

export interface OpenStackClientOptions {
  backend: string;
  /** Keystone v3 URL, e.g. `https://keystone.example.com:5000/v3`. */
  authUrl: string;
  /** @default 'RegionOne' */
  region?: string;
  /** @default 'public' */
  interface?: 'public' | 'internal' | 'admin';
  /** The gateway's own credential (probes and watchers only). @default none */
  serviceAuth?: ServiceAuth;
  /** Deadline of one call. @default 10000 */
  timeoutMs?: number;
  /** Connections per origin. @default 16 */
  maxConnections?: number;
  /** Retries of idempotent reads. @default 2 */
  readRetries?: number;
  onCall?: (r: CallRecord) => void;
  /**
   * Where the breakers of Keystone, Cinder and Nova (services `keystone`, `cinder`, `nova`) live;
   * clients of one backend share it, so a watcher's calls and callers' calls see the same state.
   * @default a board of its own with the default breaker settings
   */
  breakers?: BreakerBoard;
}

/** The breaker service name of each API (one breaker per service endpoint). */
const BREAKER_SERVICE = { identity: 'keystone', volume: 'cinder', compute: 'nova' } as const;

export interface OpenStackCall {
  service: ApiService;
  method: HttpRequest['method'];
  /** Path below the service endpoint, from `urls.ts`. */
  path: string;
  /** Endpoint template for metrics, e.g. `POST /volumes/:id/action os-extend`. */
  endpoint: string;
  query?: URLSearchParams;
  body?: unknown;
  /** Phrase for error messages, e.g. `extending volume 4f1…`. */
  action: string;
  /** Lowest microversion this call needs; checked before sending. */
  needs?: string;
  /** What needs it, for the UNSUPPORTED_BY_BACKEND message. */
  feature?: string;
}

export interface OpenStackResult<T> {
  status: number;
  /** Parsed JSON; undefined for empty bodies (202/204). */
  data: T | undefined;
  /** The microversion the request was sent with. */
  version: Microversion;
  /**
   * The service's id for this request (`X-OpenStack-Request-Id`), null when it sent none. Nova
   * keys the instance action a server call starts by it; Cinder's user messages carry it.
   */
  requestId: string | null;
}

/** A service's versioned root and its endpoint template (`GET /v3/`, `GET /v2.1/`) for spans and metrics. */
interface VersionedRoot {
  url: string;
  endpoint: string;
}

/** Version documents are public service metadata, the same for every caller: cached per URL. */
const VERSION_TTL_MS = 10 * 60_000;
const REQUEST_ID = /^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `X-OpenStack-Request-Id` (Nova also sends it as `X-Compute-Request-Id`), when well-formed. */
function answerRequestId(h: Record<string, string | string[] | undefined>): string | null {
  const v = h['x-openstack-request-id'] ?? h['x-compute-request-id'];
  const id = Array.isArray(v) ? v[0] : v;
  return id && REQUEST_ID.test(id) ? id : null;
}

export class OpenStackClient {
  readonly backend: string;
  readonly keystone: Keystone;
  readonly #o: OpenStackClientOptions;
  readonly #transports = new Map<string, Transport>();
  readonly #versions = new Map<string, { at: number; range: Promise<{ min: Microversion; max: Microversion }> }>();
  /** The versioned root of each service last asked for its version document (the probe's target without a service credential). */
  readonly #roots = new Map<ApiService, VersionedRoot>();
  readonly #breakers: BreakerBoard;

  constructor(o: OpenStackClientOptions) {
    this.backend = o.backend;
    this.#o = o;
    this.#breakers = o.breakers ?? new BreakerBoard();
    // Made now, so /readyz and /metrics list all three before the first call.
    for (const service of ['identity', 'volume', 'compute'] as const) this.breaker(service);
    this.keystone = new Keystone({
      backend: o.backend,
      authUrl: o.authUrl.replace(/\/+$/, ''),
      region: o.region ?? CATALOG_DEFAULTS.region,
      interface: o.interface ?? CATALOG_DEFAULTS.interface,
      serviceAuth: o.serviceAuth,
      send: (r) =>
        this.#send(r.url, {
          method: r.method,
          path: '',
          headers: r.headers,
          body: r.body,
          endpoint: r.endpoint,
          breaker: this.breaker('identity'),
        }),
    });
  }

  /** The caller's session (validated token, project, endpoints). */
  session(o: CallOptions): Promise<Session> {
    return this.keystone.callerSession(o.credential.token);
  }

  /** The microversion calls to `service` are sent with for this session's endpoint. */
  async version(session: Session, service: ApiService): Promise<Microversion> {
    const range = await this.#range(session, service);
    return range.max.min(KNOWN_MAX[service]);
  }

  /**
   * Reads `service`'s version document now, bypassing (and refreshing) the cache: health probes
   * use it to prove the service answers, which a cached range would not.
   */
  async probe(session: Session, service: ApiService, signal?: AbortSignal, probe?: ProbeCall): Promise<Microversion> {
    const range = await this.#range(session, service, { fresh: true, signal, probe });
    return range.max.min(KNOWN_MAX[service]);
  }

  async call<T>(c: OpenStackCall, o: CallOptions): Promise<OpenStackResult<T>> {
    const session = await this.session(o);
    const version = await this.version(session, c.service);
    if (c.needs && !version.atLeast(c.needs))
      throw tooOld(this.backend, c.feature ?? c.action, c.service, c.needs, version.toString());
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-auth-token': session.token,
      'openstack-api-version': `${c.service} ${version.toString()}`,
    };
    if (o.requestId && REQUEST_ID.test(o.requestId)) headers['x-openstack-request-id'] = o.requestId;
    let body: string | undefined;
    if (c.body !== undefined) {
      body = JSON.stringify(c.body);
      headers['content-type'] = 'application/json';
    }
    const base = c.service === 'volume' ? session.volumeUrl : session.computeUrl;
    const res = await this.#send(base, {
      method: c.method,
      path: c.path,
      query: c.query,
      headers,
      body,
      endpoint: c.endpoint,
      signal: o.signal,
      requestId: o.requestId,
      budget: o.budget,
      breaker: this.breaker(c.service),
    });
    o.onAnswer?.(res.status);
    if (res.status < 200 || res.status > 299) {
      if (res.status === 401) this.keystone.forget(session.token);
      throw errorFromResponse(res.status, res.text, { backend: this.backend, service: c.service, action: c.action });
    }
    const requestId = answerRequestId(res.headers);
    if (res.text.length === 0) return { status: res.status, data: undefined, version, requestId };
    try {
      return { status: res.status, data: JSON.parse(res.text) as T, version, requestId };
    } catch (err) {
      throw new BackendError(`backend "${this.backend}" sent a body that is not JSON while ${c.action}`, {
        backend: this.backend,
        httpStatus: res.status,
        cause: err,
      });
    }
  }

  /** The breaker of one service of this backend. */
  breaker(service: ApiService | 'identity'): Breaker {
    return this.#breakers.get(this.backend, BREAKER_SERVICE[service]);
  }

  /** Unauthenticated reachability of Keystone (`GET /v3`), for health probes. */
  async probeKeystone(signal?: AbortSignal, probe?: ProbeCall): Promise<number> {
    const res = await this.#send(this.#o.authUrl.replace(/\/+$/, ''), {
      method: 'GET',
      path: '',
      headers: { accept: 'application/json' },
      endpoint: 'GET /v3',
      signal,
      breaker: this.breaker('identity'),
      probe,
    });
    return res.status;
  }

  /**
   * The background probe of Cinder's and Nova's breakers that are not closed, without a token: a
   * `GET` of the versioned root last used. Any answer below 500 (401 included) shows the service
   * answers, which is all a breaker asks. A service never used yet has no known root: nothing to
   * probe, and no call through it failed either.
   */
  async probeOpenServices(signal: AbortSignal | undefined, probe: ProbeCall): Promise<void> {
    const open = (['volume', 'compute'] as const).filter(
      (service) => this.breaker(service).state !== 'CLOSED' && this.#roots.has(service),
    );
    await Promise.all(
      open.map((service) =>
        this.#send(this.#roots.get(service)!.url, {
          method: 'GET',
          path: '',
          headers: { accept: 'application/json' },
          endpoint: this.#roots.get(service)!.endpoint,
          signal,
          breaker: this.breaker(service),
          probe,
        }),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.#transports.values()].map((t) => t.close()));
    this.#transports.clear();
  }

  #range(
    session: Session,
    service: ApiService,
    o: { fresh?: boolean; signal?: AbortSignal; probe?: ProbeCall } = {},
  ): Promise<{ min: Microversion; max: Microversion }> {
    const base = service === 'volume' ? session.volumeUrl : session.computeUrl;
    // The versioned root: …/v3/ for Cinder, …/v2.1/ for Nova (the project part is dropped).
    const m = (service === 'volume' ? /^(.*?\/v3)(\/.*)?$/ : /^(.*?\/v2(?:\.1)?)(\/.*)?$/).exec(base);
    const root = `${m ? m[1] : base}/`;
    // Its version segment only: the path before it is the deployment's, and an unmatched base may name the project.
    const endpoint = `GET /${m ? m[1]!.slice(m[1]!.lastIndexOf('/') + 1) + '/' : ''}`;
    this.#roots.set(service, { url: root, endpoint });
    const hit = this.#versions.get(root);
    if (!o.fresh && hit && Date.now() - hit.at < VERSION_TTL_MS) return hit.range;
    const range = (async () => {
      const res = await this.#send(root, {
        method: 'GET',
        path: '',
        headers: { accept: 'application/json', 'x-auth-token': session.token },
        endpoint,
        signal: o.signal,
        breaker: this.breaker(service),
        probe: o.probe,
      });
      if (res.status === 401) this.keystone.forget(session.token);
      if (res.status !== 200)
        throw errorFromResponse(res.status, res.text, {
          backend: this.backend,
          service,
          action: 'reading the version document',
        });
      const r = rangeFromVersionDocument(JSON.parse(res.text), service === 'volume' ? /^v3/ : /^v2\.1/);
      // No microversion information: the base version only.
      return (
        r ?? {
          min: new Microversion(service === 'volume' ? 3 : 2, service === 'volume' ? 0 : 1),
          max: new Microversion(service === 'volume' ? 3 : 2, service === 'volume' ? 0 : 1),
        }
      );
    })();
    if (o.fresh) {
      // A probe (which its own signal may cancel) refreshes the cache only with a success.
      range.then(
        (r) => this.#versions.set(root, { at: Date.now(), range: Promise.resolve(r) }),
        () => undefined,
      );
      return range;
    }
    this.#versions.set(root, { at: Date.now(), range });
    range.catch(() => {
      if (this.#versions.get(root)?.range === range) this.#versions.delete(root);
    });
    return range;
  }

  /** Sends to `baseUrl` + `req.path` through the pool of the URL's origin. */
  #send(baseUrl: string, req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(baseUrl);
    let t = this.#transports.get(url.origin);
    if (!t) {
      t = new Transport({
        backend: this.backend,
        baseUrl: url.origin,
        timeoutMs: this.#o.timeoutMs,
        maxConnections: this.#o.maxConnections,
        readRetries: this.#o.readRetries,
        onCall: this.#o.onCall,
      });
      this.#transports.set(url.origin, t);
    }
    return t.send({
      ...req,
      path: url.pathname.replace(/\/+$/, '') + req.path + (req.path === '' && baseUrl.endsWith('/') ? '/' : ''),
    });
  }
}
