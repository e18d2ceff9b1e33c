/**
 * The Nova API process (nova-26 recordings): keystonemiddleware (401), microversions from
 * `OpenStack-API-Version: compute X` or the legacy `X-OpenStack-Nova-API-Version` (400
 * malformed, 406 out of range), both version headers and `Vary` on every answer, faults with
 * `application/json; charset=UTF-8`, the optional project segment (`/v2.1/{project_id}/…`).
 */
import { ApiError, faultBody, GENERIC_NOT_FOUND } from '../http/fault';
import { negotiate, pickServiceVersion, versionString, type Version } from '../http/microversion';
import type { TokenValidator } from '../http/token-auth';
import { matchRoute, parseJsonBody, route, type Route } from '../http/routing';
import { header, segments, type SimRequest, type SimResponse } from '../http/types';
import { pyDumps } from '../pyjson';
import type { SimState } from '../state';
import type { NovaCtx, NovaResult } from './context';
import { listInstanceActions, showInstanceAction } from './actions-view';
import { deleteServer, listServers, showServer } from './servers';
import {
  createAttachment,
  deleteAttachment,
  listAttachments,
  showAttachment,
  updateAttachment,
} from './volume-attachments';

type Handler = (ctx: NovaCtx) => NovaResult;
const r = (method: string, path: string, handler: Handler): Route<Handler> => route(method, path, handler);

const ROUTES: Array<Route<Handler>> = [
  r('GET', 'servers', (c) => listServers(c, false)),
  r('GET', 'servers/detail', (c) => listServers(c, true)),
  r('GET', 'servers/:id', showServer),
  r('DELETE', 'servers/:id', deleteServer),
  r('GET', 'servers/:id/os-volume_attachments', listAttachments),
  r('POST', 'servers/:id/os-volume_attachments', createAttachment),
  r('GET', 'servers/:id/os-volume_attachments/:volumeId', showAttachment),
  r('PUT', 'servers/:id/os-volume_attachments/:volumeId', updateAttachment),
  r('DELETE', 'servers/:id/os-volume_attachments/:volumeId', deleteAttachment),
  r('GET', 'servers/:id/os-instance-actions', listInstanceActions),
  r('GET', 'servers/:id/os-instance-actions/:requestId', showInstanceAction),
];

const match = (method: string, segs: string[]): ReturnType<typeof matchRoute<Handler>> =>
  matchRoute(ROUTES, method, segs);

export class NovaService {
  constructor(
    private readonly state: SimState,
    private readonly tokens: TokenValidator,
  ) {}

  handle(req: SimRequest): SimResponse {
    const segs = segments(req.path);
    if (segs.length === 0 && req.method === 'GET') {
      return {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
        body: pyDumps({ versions: [this.v20(req), this.v21(req)] }),
      };
    }
    if (segs[0] !== 'v2.1')
      return {
        status: 404,
        headers: { 'Content-Type': 'application/json; charset=UTF-8' },
        body: faultBody(404, GENERIC_NOT_FOUND),
      };
    const auth = this.tokens.authenticate('nova', req);
    if (!auth) return this.tokens.unauthorized();
    const requested =
      pickServiceVersion(header(req, 'openstack-api-version'), 'compute') ??
      header(req, 'x-openstack-nova-api-version');
    const neg = negotiate(requested, '2.1', this.state.opts.novaMaxVersion);
    if (!neg.ok) {
      if (neg.status === 400)
        return {
          status: 400,
          headers: { 'Content-Type': 'application/json; charset=UTF-8' },
          body: faultBody(400, neg.message),
        };
      return this.fault(req, neg.requested, 406, neg.message);
    }
    const mv = neg.version;
    try {
      if (segs.length === 1) {
        if (req.method !== 'GET') throw new ApiError(404, GENERIC_NOT_FOUND);
        return this.json(req, mv, 200, { version: this.v21(req) });
      }
      const rest = segs.slice(1);
      let found = /^[0-9a-f]{32}$/.test(rest[0]!) ? match(req.method, rest.slice(1)) : null;
      if (found && rest[0] !== auth.projectId) {
        throw new ApiError(
          400,
          `Malformed request URL: URL's project_id '${rest[0]}' doesn't match Context's project_id '${auth.projectId ?? 'None'}'`,
        );
      }
      found ??= match(req.method, rest);
      if (!found) throw new ApiError(404, GENERIC_NOT_FOUND);
      const ctx: NovaCtx = {
        req,
        auth,
        state: this.state,
        mv,
        params: found.params,
        body: parseJsonBody(req, ['application/json']),
      };
      const out = found.route.handler(ctx);
      if (out.body === undefined)
        return {
          status: out.status,
          headers: { ...this.headers(req, versionString(mv), 'application/json'), ...out.headers },
          body: null,
        };
      return this.json(req, mv, out.status, out.body);
    } catch (e) {
      if (e instanceof ApiError) return this.fault(req, versionString(mv), e.status, e.message);
      throw e;
    }
  }

  private v20(req: SimRequest): unknown {
    return {
      id: 'v2.0',
      status: 'SUPPORTED',
      version: '',
      min_version: '',
      updated: '2011-01-21T11:33:21Z',
      links: [{ rel: 'self', href: `${req.base}/v2/` }],
    };
  }

  private v21(req: SimRequest): unknown {
    return {
      id: 'v2.1',
      status: 'CURRENT',
      version: this.state.opts.novaMaxVersion,
      min_version: '2.1',
      updated: '2013-07-23T11:33:21Z',
      links: [
        { rel: 'self', href: `${req.base}/v2.1/` },
        { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' },
      ],
      'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
    };
  }

  private headers(req: SimRequest, mv: string, contentType: string): Record<string, string | string[]> {
    return {
      'Content-Type': contentType,
      'Openstack-Api-Version': `compute ${mv}`,
      'X-Openstack-Nova-Api-Version': mv,
      Vary: ['OpenStack-API-Version', 'X-OpenStack-Nova-API-Version'],
      'x-openstack-request-id': req.requestId,
      'x-compute-request-id': req.requestId,
    };
  }

  private json(req: SimRequest, mv: Version, status: number, body: unknown): SimResponse {
    return { status, headers: this.headers(req, versionString(mv), 'application/json'), body: pyDumps(body) };
  }

  private fault(req: SimRequest, mv: string, status: number, message: string): SimResponse {
    return {
      status,
      headers: this.headers(req, mv, 'application/json; charset=UTF-8'),
      body: faultBody(status, message),
    };
  }
}
