/**
 * Every Nomad volume path the adapter may call, one tiny function per operation. Paths are built
 * in the `urls.ts` of each folder only. Ids were already checked by `adapters/contract/input.ts`; encoding
 * here is defence in depth, and `pathSegment` refuses (BAD_USER_INPUT, never a URIError) what no
 * encoding makes safe.
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
