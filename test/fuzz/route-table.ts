/**
 * The backend calls the gateway is meant to make: method, path pattern and allowed query
 * parameters per service. Sources: docs/nomad.md and docs/openstack.md, adapters/nomad/{volumes,snapshots,plugins,cluster,watch}/urls.ts +
 * requests.ts, adapters/openstack/{cinder,nova,keystone}/urls.ts + requests.ts, and
 * adapters/openstack/client.ts (version documents). A request in a simulator's log that matches no row, or that carries a dot
 * segment, an encoded slash or backslash, an unexpected query parameter or a `*` namespace
 * outside a list call, is a finding.
 */

export type Service = 'nomad' | 'keystone' | 'cinder' | 'nova';

export interface Route {
  service: Service;
  method: string;
  /** Path with `:name` for one segment (e.g. `/v1/volume/csi/:id`). */
  pattern: string;
  /** Query parameter names the gateway may send on this call. */
  query: readonly string[];
  /** `namespace=*` is allowed (Nomad list calls only). */
  starNamespace?: boolean;
}

const NOMAD: Route[] = [
  {
    service: 'nomad',
    method: 'GET',
    pattern: '/v1/volumes',
    query: ['type', 'namespace', 'node_id', 'plugin_id', 'filter', 'per_page', 'next_token'],
    starNamespace: true,
  },
  { service: 'nomad', method: 'GET', pattern: '/v1/volume/csi/:id', query: ['namespace'] },
  { service: 'nomad', method: 'PUT', pattern: '/v1/volume/csi/:id', query: ['namespace'] },
  { service: 'nomad', method: 'PUT', pattern: '/v1/volume/csi/:id/create', query: ['namespace'] },
  { service: 'nomad', method: 'DELETE', pattern: '/v1/volume/csi/:id', query: ['namespace', 'force'] },
  { service: 'nomad', method: 'DELETE', pattern: '/v1/volume/csi/:id/delete', query: ['namespace'] },
  { service: 'nomad', method: 'DELETE', pattern: '/v1/volume/csi/:id/detach', query: ['namespace', 'node'] },
  {
    service: 'nomad',
    method: 'GET',
    pattern: '/v1/volumes/external',
    query: ['plugin_id', 'namespace', 'per_page', 'next_token'],
  },
  { service: 'nomad', method: 'GET', pattern: '/v1/volumes/snapshot', query: ['plugin_id', 'per_page', 'next_token'] },
  { service: 'nomad', method: 'POST', pattern: '/v1/volumes/snapshot', query: ['namespace'] },
  { service: 'nomad', method: 'DELETE', pattern: '/v1/volumes/snapshot', query: ['plugin_id', 'snapshot_id'] },
  { service: 'nomad', method: 'GET', pattern: '/v1/plugins', query: ['type'] },
  { service: 'nomad', method: 'GET', pattern: '/v1/plugin/csi/:id', query: [] },
  { service: 'nomad', method: 'GET', pattern: '/v1/status/leader', query: [] },
];

const LIST = ['limit', 'marker', 'sort'];
const KEYSTONE: Route[] = [
  { service: 'keystone', method: 'GET', pattern: '/v3', query: [] },
  { service: 'keystone', method: 'GET', pattern: '/v3/', query: [] },
  { service: 'keystone', method: 'GET', pattern: '/v3/auth/tokens', query: [] },
  { service: 'keystone', method: 'POST', pattern: '/v3/auth/tokens', query: [] },
];
const CINDER: Route[] = [
  { service: 'cinder', method: 'GET', pattern: '/v3', query: [] },
  { service: 'cinder', method: 'GET', pattern: '/v3/', query: [] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/volumes/detail', query: [...LIST, 'name'] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/volumes/:id', query: [] },
  { service: 'cinder', method: 'POST', pattern: '/v3/:project/volumes', query: [] },
  { service: 'cinder', method: 'PUT', pattern: '/v3/:project/volumes/:id', query: [] },
  { service: 'cinder', method: 'DELETE', pattern: '/v3/:project/volumes/:id', query: ['cascade', 'force'] },
  { service: 'cinder', method: 'POST', pattern: '/v3/:project/volumes/:id/action', query: [] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/snapshots/detail', query: [...LIST, 'volume_id'] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/snapshots/:id', query: [] },
  { service: 'cinder', method: 'POST', pattern: '/v3/:project/snapshots', query: [] },
  { service: 'cinder', method: 'DELETE', pattern: '/v3/:project/snapshots/:id', query: [] },
  { service: 'cinder', method: 'POST', pattern: '/v3/:project/attachments', query: [] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/attachments/detail', query: [...LIST, 'volume_id'] },
  { service: 'cinder', method: 'GET', pattern: '/v3/:project/attachments/:id', query: [] },
  { service: 'cinder', method: 'PUT', pattern: '/v3/:project/attachments/:id', query: [] },
  { service: 'cinder', method: 'DELETE', pattern: '/v3/:project/attachments/:id', query: [] },
  { service: 'cinder', method: 'POST', pattern: '/v3/:project/attachments/:id/action', query: [] },
  // User messages: failure signals of a tracked change, by the resource or by the request that made it.
  {
    service: 'cinder',
    method: 'GET',
    pattern: '/v3/:project/messages',
    query: ['resource_uuid', 'request_id', 'sort', 'limit'],
  },
];
const NOVA: Route[] = [
  { service: 'nova', method: 'GET', pattern: '/v2.1', query: [] },
  { service: 'nova', method: 'GET', pattern: '/v2.1/', query: [] },
  { service: 'nova', method: 'GET', pattern: '/v2.1/servers/detail', query: ['limit', 'marker'] },
  { service: 'nova', method: 'GET', pattern: '/v2.1/servers/:id', query: [] },
  { service: 'nova', method: 'GET', pattern: '/v2.1/servers/:id/os-volume_attachments', query: [] },
  { service: 'nova', method: 'POST', pattern: '/v2.1/servers/:id/os-volume_attachments', query: [] },
  { service: 'nova', method: 'GET', pattern: '/v2.1/servers/:id/os-volume_attachments/:volume', query: [] },
  { service: 'nova', method: 'PUT', pattern: '/v2.1/servers/:id/os-volume_attachments/:volume', query: [] },
  { service: 'nova', method: 'DELETE', pattern: '/v2.1/servers/:id/os-volume_attachments/:volume', query: [] },
  // The instance action of a server call, by the request id Nova answered it with (failure signals of an attach or detach).
  { service: 'nova', method: 'GET', pattern: '/v2.1/servers/:id/os-instance-actions/:request', query: [] },
];

export const ROUTES: readonly Route[] = [...NOMAD, ...KEYSTONE, ...CINDER, ...NOVA];

/** One request from a simulator's log, in a shape common to both simulators. */
export interface BackendCall {
  service: Service;
  method: string;
  /** Raw path as received (not decoded), without the query. */
  path: string;
  /** Decoded query parameters. */
  query: Record<string, string[]>;
  /** The simulator's answer; 0 when it never answered. */
  status: number;
}

const compiled = ROUTES.map((r) => ({
  route: r,
  // A parameter segment is any non-empty run without '/' (what the checks below inspect further).
  re: new RegExp(
    '^' +
      r.pattern
        .split('/')
        .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/') +
      '$',
  ),
}));

/** Why `call` is outside the route table; empty when it is a call the gateway is meant to make. */
export function routeViolations(call: BackendCall): string[] {
  const out: string[] = [];
  const segments = call.path.split('/');
  for (const s of segments) {
    const decoded = safeDecode(s);
    if (decoded === '.' || decoded === '..') out.push(`dot segment ${JSON.stringify(s)}`);
  }
  if (/%2f|%5c/i.test(call.path)) out.push('encoded slash or backslash in the path');
  if (call.path.includes('\\')) out.push('backslash in the path');
  if (/%(0[0-9a-f]|1[0-9a-f]|7f)/i.test(call.path)) out.push('encoded control character in the path');
  if (/\/\//.test(call.path)) out.push('empty path segment');
  const match = compiled.find(
    (c) => c.route.service === call.service && c.route.method === call.method && c.re.test(call.path),
  );
  if (!match) {
    out.push('no route for this method and path');
    return out;
  }
  for (const [name, values] of Object.entries(call.query)) {
    if (!match.route.query.includes(name)) out.push(`unexpected query parameter ${JSON.stringify(name)}`);
    if (values.length > 1) out.push(`query parameter ${JSON.stringify(name)} repeated`);
    if (name === 'namespace' && values.includes('*') && !match.route.starNamespace)
      out.push('namespace=* outside a list call');
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Describes a call for reports: `nomad GET /v1/volume/csi/x?namespace=default → 200`. */
export function describeCall(c: BackendCall): string {
  const q = new URLSearchParams();
  for (const [k, vs] of Object.entries(c.query)) for (const v of vs) q.append(k, v);
  const qs = q.toString();
  return `${c.service} ${c.method} ${c.path}${qs ? `?${qs}` : ''} → ${c.status || 'no answer'}`;
}
