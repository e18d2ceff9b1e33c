/**
 * The Cinder v3 API process: keystonemiddleware (401), routing (unknown paths and methods get
 * webob's HTML 404, with no version headers), microversion negotiation (400 malformed without
 * version headers, 406 `computeFault`), Content-Type (415) and body (400 `Malformed request
 * body`) checks, the URL-project check (400 `Malformed request url`), version-gated routes
 * (generic 404), then the handler. Every JSON answer carries `OpenStack-API-Version`, `Vary`
 * and the request-id headers (cinder-21/00, 08; keystone-22/01–03).
 */
import { ApiError, faultBody, GENERIC_NOT_FOUND } from '../http/fault';
import { atLeast, negotiate, pickServiceVersion, versionString, type Version } from '../http/microversion';
import type { AuthContext, TokenValidator } from '../http/token-auth';
import { matchRoute, parseJsonBody, route, type Route } from '../http/routing';
import { header, segments, type SimRequest, type SimResponse } from '../http/types';
import { pyDumps } from '../pyjson';
import type { SimState } from '../state';
import { volumeAction } from './actions';
import {
  attachmentAction,
  createAttachment,
  deleteAttachment,
  listAttachments,
  showAttachment,
  updateAttachment,
} from './attachments';
import type { CinderCtx, CinderResult } from './context';
import {
  availabilityZones,
  createType,
  deleteMessage,
  limits,
  listMessages,
  listTypes,
  services,
  showMessage,
  showType,
  versionsBody,
} from './misc';
import {
  createSnapshot,
  deleteSnapshot,
  listSnapshots,
  showSnapshot,
  snapshotAction,
  updateSnapshot,
} from './snapshots';
import {
  createVolume,
  deleteVolumeRoute,
  listVolumes,
  showVolume,
  updateVolume,
  volumeMetadata,
  volumeMetadataItem,
  volumeSummary,
} from './volumes';

type Handler = (ctx: CinderCtx) => CinderResult;
const r = (method: string, path: string, handler: Handler, minMv?: string): Route<Handler> =>
  route(method, path, handler, minMv);

/** Literal routes first so `volumes/detail` wins over `volumes/:id`. */
const ROUTES: Array<Route<Handler>> = [
  r('GET', 'volumes', (c) => listVolumes(c, false)),
  r('GET', 'volumes/detail', (c) => listVolumes(c, true)),
  r('GET', 'volumes/summary', volumeSummary, '3.12'),
  r('POST', 'volumes', createVolume),
  r('GET', 'volumes/:id', showVolume),
  r('PUT', 'volumes/:id', updateVolume),
  r('DELETE', 'volumes/:id', deleteVolumeRoute),
  r('POST', 'volumes/:id/action', volumeAction),
  r('GET', 'volumes/:id/metadata', (c) => volumeMetadata(c, 'GET')),
  r('POST', 'volumes/:id/metadata', (c) => volumeMetadata(c, 'POST')),
  r('PUT', 'volumes/:id/metadata', (c) => volumeMetadata(c, 'PUT')),
  r('GET', 'volumes/:id/metadata/:key', (c) => volumeMetadataItem(c, 'GET')),
  r('PUT', 'volumes/:id/metadata/:key', (c) => volumeMetadataItem(c, 'PUT')),
  r('DELETE', 'volumes/:id/metadata/:key', (c) => volumeMetadataItem(c, 'DELETE')),
  r('GET', 'snapshots', (c) => listSnapshots(c, false)),
  r('GET', 'snapshots/detail', (c) => listSnapshots(c, true)),
  r('POST', 'snapshots', createSnapshot),
  r('GET', 'snapshots/:id', showSnapshot),
  r('PUT', 'snapshots/:id', updateSnapshot),
  r('DELETE', 'snapshots/:id', deleteSnapshot),
  r('POST', 'snapshots/:id/action', snapshotAction),
  r('GET', 'attachments', (c) => listAttachments(c, false), '3.27'),
  r('GET', 'attachments/detail', (c) => listAttachments(c, true), '3.27'),
  r('POST', 'attachments', createAttachment, '3.27'),
  r('GET', 'attachments/:id', showAttachment, '3.27'),
  r('PUT', 'attachments/:id', updateAttachment, '3.27'),
  r('DELETE', 'attachments/:id', deleteAttachment, '3.27'),
  r('POST', 'attachments/:id/action', attachmentAction, '3.27'),
  r('GET', 'messages', listMessages, '3.3'),
  r('GET', 'messages/:id', showMessage, '3.3'),
  r('DELETE', 'messages/:id', deleteMessage, '3.3'),
  r('GET', 'types', listTypes),
  r('POST', 'types', createType),
  r('GET', 'types/:id', showType),
  r('GET', 'limits', limits),
  r('GET', 'os-services', services),
  r('GET', 'os-availability-zone', availabilityZones),
];

const match = (method: string, segs: string[]): ReturnType<typeof matchRoute<Handler>> =>
  matchRoute(ROUTES, method, segs);

/** webob's 404 page for paths no route matches (cinder-21/00, 08). */
const HTML_404 =
  '<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>';

const JSON_TYPES = ['application/json', 'application/vnd.openstack.volume+json'];

export class CinderService {
  constructor(
    private readonly state: SimState,
    private readonly tokens: TokenValidator,
  ) {}

  handle(req: SimRequest): SimResponse {
    const segs = segments(req.path);
    if (segs.length === 0) {
      if (req.method !== 'GET') return this.html404();
      return this.json(req, [3, 0], 300, versionsBody(this.state, req.base));
    }
    if (segs[0] !== 'v3') return this.html404();
    const auth = this.tokens.authenticate('cinder', req);
    if (!auth) return this.tokens.unauthorized();
    if (segs.length === 1)
      return req.method === 'GET' ? this.json(req, [3, 0], 200, versionsBody(this.state, req.base)) : this.html404();

    const rest = segs.slice(1);
    let urlProject: string | null = null;
    let found = /^[0-9a-f-]+$/.test(rest[0]!) ? match(req.method, rest.slice(1)) : null;
    if (found) urlProject = rest[0]!;
    else found = match(req.method, rest);
    if (!found) return this.html404();

    const requested = pickServiceVersion(header(req, 'openstack-api-version'), 'volume');
    const neg = negotiate(requested, '3.0', this.state.opts.cinderMaxVersion);
    if (!neg.ok) {
      if (neg.status === 400)
        return {
          status: 400,
          headers: {
            'Content-Length': String(Buffer.byteLength(faultBody(400, neg.message))),
            'Content-Type': 'application/json',
          },
          body: faultBody(400, neg.message),
        };
      return this.fault(req, neg.requested, 406, neg.message);
    }
    const mv = neg.version;
    const mvText = versionString(mv);
    try {
      const body = parseJsonBody(req, JSON_TYPES);
      if (urlProject !== null && urlProject !== auth.projectId) throw new ApiError(400, 'Malformed request url');
      if (found.route.minMv && !atLeast(mv, found.route.minMv)) throw new ApiError(404, GENERIC_NOT_FOUND);
      const ctx = this.context(req, auth, mv, urlProject, found.params, body);
      const result = found.route.handler(ctx);
      if (result.body === undefined) return this.empty(req, mvText, result.status, result.emptyAs ?? 'json');
      return this.json(req, mv, result.status, result.body);
    } catch (e) {
      if (e instanceof ApiError) return this.fault(req, mvText, e.status, e.message, e.retryAfter);
      throw e;
    }
  }

  private context(
    req: SimRequest,
    auth: AuthContext,
    mv: Version,
    urlProject: string | null,
    params: Record<string, string>,
    body: unknown,
  ): CinderCtx {
    return { req, auth, state: this.state, mv, isAdmin: auth.isAdmin, base: req.base, urlProject, params, body };
  }

  private headers(req: SimRequest, mv: string, contentType: string): Record<string, string> {
    return {
      'Content-Type': contentType,
      'Openstack-Api-Version': `volume ${mv}`,
      Vary: 'OpenStack-API-Version',
      'x-compute-request-id': req.requestId,
      'x-openstack-request-id': req.requestId,
    };
  }

  private json(req: SimRequest, mv: Version, status: number, body: unknown): SimResponse {
    return { status, headers: this.headers(req, versionString(mv), 'application/json'), body: pyDumps(body) };
  }

  private empty(req: SimRequest, mv: string, status: number, as: 'json' | 'html'): SimResponse {
    return {
      status,
      headers: this.headers(req, mv, as === 'html' ? 'text/html; charset=UTF-8' : 'application/json'),
      body: null,
    };
  }

  private fault(req: SimRequest, mv: string, status: number, message: string, retryAfter?: string): SimResponse {
    const headers = this.headers(req, mv, 'application/json');
    if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
    return { status, headers, body: faultBody(status, message, retryAfter) };
  }

  private html404(): SimResponse {
    return { status: 404, headers: { 'Content-Type': 'text/html; charset=UTF-8' }, body: HTML_404 };
  }
}
