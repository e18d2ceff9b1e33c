/**
 * Keystone's token body → a {@link Session}: the token's project, expiry and the endpoints of the
 * configured region and interface from its catalog.
 */
import { BackendError, BackendUnavailableError, UnauthenticatedError } from '../../contract/errors';

/** A validated token with what the gateway needs to use it. */
export interface Session {
  token: string;
  projectId: string;
  /** The project's name, as the token body gives it; null when it does not. */
  projectName: string | null;
  /** Epoch ms. */
  expiresAt: number;
  /** Cinder v3 endpoint for the project, e.g. `http://cinder:8776/v3/<project>`. */
  volumeUrl: string;
  /** Nova endpoint, e.g. `http://nova:8774/v2.1`. */
  computeUrl: string;
  /** Role names the token carries on its project (e.g. `admin`, `member`, `reader`). */
  roles: string[];
}

/** Whether the session's token carries the `admin` role (Cinder: `all_tenants`, admin-only fields). */
export const isAdminSession = (s: Session): boolean => s.roles.includes('admin');

/** Which catalog endpoints a session uses. */
export interface CatalogChoice {
  backend: string;
  region: string;
  interface: 'public' | 'internal' | 'admin';
}

interface CatalogEntry {
  type: string;
  endpoints: Array<{ interface: string; region?: string; region_id?: string; url: string }>;
}
interface TokenBody {
  token?: {
    expires_at?: string;
    project?: { id?: string; name?: string };
    roles?: Array<{ name?: string }>;
    catalog?: CatalogEntry[];
  };
}

/** Catalog types searched for Cinder v3, best first (deployments register one or both). */
const VOLUME_TYPES = ['block-storage', 'volumev3', 'block-store', 'volume'];
const COMPUTE_TYPES = ['compute'];

/** The session of `token` from Keystone's token body (`text`). */
export function toSession(token: string, text: string, c: CatalogChoice): Session {
  let body: TokenBody;
  try {
    body = JSON.parse(text) as TokenBody;
  } catch (err) {
    throw new BackendError(`Keystone sent a token body that is not JSON (backend "${c.backend}")`, {
      backend: c.backend,
      cause: err,
    });
  }
  const t = body.token;
  const projectId = t?.project?.id;
  if (!t || !projectId)
    throw new UnauthenticatedError(`the Keystone token for backend "${c.backend}" is not scoped to a project`, {
      backend: c.backend,
    });
  const expiresAt = Date.parse(t.expires_at ?? '');
  return {
    token,
    projectId,
    projectName: typeof t.project?.name === 'string' ? t.project.name : null,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : Date.now() + 60_000,
    volumeUrl: endpoint(t.catalog ?? [], VOLUME_TYPES, 'block-storage (Cinder v3)', c),
    computeUrl: endpoint(t.catalog ?? [], COMPUTE_TYPES, 'compute (Nova)', c),
    roles: (t.roles ?? []).flatMap((r) => (typeof r?.name === 'string' ? [r.name] : [])),
  };
}

function endpoint(catalog: CatalogEntry[], types: string[], what: string, c: CatalogChoice): string {
  for (const type of types) {
    for (const entry of catalog.filter((e) => e.type === type)) {
      const ep = entry.endpoints.find((e) => e.interface === c.interface && (e.region_id ?? e.region) === c.region);
      if (ep) return ep.url.replace(/\/+$/, '');
    }
  }
  throw new BackendUnavailableError(
    `the Keystone catalog of backend "${c.backend}" has no ${what} endpoint for region "${c.region}", interface "${c.interface}"`,
    {
      backend: c.backend,
      retryable: false,
    },
  );
}
