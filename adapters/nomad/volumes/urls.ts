/**
 * Every Nomad path the adapter may call, one tiny function per operation. No other file builds
 * paths. Ids were already checked by `adapters/input.ts`; encoding here is defence in depth, and
 * `pathSegment` refuses (BAD_USER_INPUT, never a URIError) what no encoding makes safe.
 */
import { pathSegment } from '../../contract/input';

const seg = (id: string): string => pathSegment(id);

export const listVolumesURL = (): string => '/v1/volumes';
export const volumeURL = (id: string): string => `/v1/volume/csi/${seg(id)}`;
export const readVolumeURL = volumeURL;
/** Nomad ignores the path id on register (the body carries it); we still send the real one. */
export const registerVolumeURL = volumeURL;
export const deregisterVolumeURL = volumeURL;
export const createVolumeURL = (id: string): string => `${volumeURL(id)}/create`;
export const deleteVolumeURL = (id: string): string => `${volumeURL(id)}/delete`;
export const detachVolumeURL = (id: string): string => `${volumeURL(id)}/detach`;
export const listExternalVolumesURL = (): string => '/v1/volumes/external';
export const snapshotsURL = (): string => '/v1/volumes/snapshot';
export const listPluginsURL = (): string => '/v1/plugins';
export const readPluginURL = (id: string): string => `/v1/plugin/csi/${seg(id)}`;
export const leaderURL = (): string => '/v1/status/leader';
export const eventStreamURL = (): string => '/v1/event/stream';
export const aclTokenSelfURL = (): string => '/v1/acl/token/self';
