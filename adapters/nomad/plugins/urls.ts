/** Nomad's CSI plugin paths (see `volumes/urls.ts` for the encoding rule). */
import { pathSegment } from '../../contract/input';

export const listPluginsURL = (): string => '/v1/plugins';
export const readPluginURL = (id: string): string => `/v1/plugin/csi/${pathSegment(id)}`;
/** Volumes as a plugin's controller lists them. */
export const listExternalVolumesURL = (): string => '/v1/volumes/external';
