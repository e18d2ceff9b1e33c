/**
 * The service catalog as keystone-22 recorded it: identity (keystone), volumev3 (cinderv3) and
 * block-storage (cinder) with per-project URLs `…/v3/<project_id>`, plus compute (nova,
 * `…/v2.1`); each with public, internal and admin endpoints in the configured region.
 */
import type { SimState } from '../state';

interface CatalogService {
  type: string;
  name: string;
  url: (projectId: string) => string;
}

export function buildCatalog(state: SimState, projectId: string): unknown[] {
  const { keystone, cinder, nova } = state.urls;
  const services: CatalogService[] = [
    { type: 'identity', name: 'keystone', url: () => `${keystone}/v3/` },
    { type: 'volumev3', name: 'cinderv3', url: (p) => `${cinder}/v3/${p}` },
    { type: 'block-storage', name: 'cinder', url: (p) => `${cinder}/v3/${p}` },
    { type: 'compute', name: 'nova', url: () => `${nova}/v2.1` },
  ];
  const region = state.opts.region;
  return services.map((s) => ({
    endpoints: (['public', 'internal', 'admin'] as const).map((iface) => ({
      id: state.catalogId(`${s.type}/${iface}`),
      interface: iface,
      region_id: region,
      url: s.url(projectId),
      region,
    })),
    id: state.catalogId(s.type),
    type: s.type,
    name: s.name,
  }));
}
