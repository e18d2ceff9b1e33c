/**
 * Every Nova path the adapter may call, relative to the compute endpoint from the catalog
 * (`…/v2.1`). No other file builds them; encoding is defence in depth as in `../cinder/urls.ts`.
 */
import { pathSegment } from '../../contract/input';

const seg = (id: string): string => pathSegment(id);

export const serversDetailURL = (): string => '/servers/detail';
export const serverURL = (id: string): string => `/servers/${seg(id)}`;
export const serverVolumeAttachmentsURL = (serverId: string): string =>
  `/servers/${seg(serverId)}/os-volume_attachments`;
export const serverVolumeAttachmentURL = (serverId: string, volumeId: string): string =>
  `/servers/${seg(serverId)}/os-volume_attachments/${seg(volumeId)}`;
/** One instance action, by the request id of the server call that started it. */
export const instanceActionURL = (serverId: string, requestId: string): string =>
  `/servers/${seg(serverId)}/os-instance-actions/${seg(requestId)}`;
