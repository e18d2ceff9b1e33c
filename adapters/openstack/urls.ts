/**
 * Every OpenStack path the adapter may call, one tiny function per resource. Paths are relative
 * to the service endpoint from the catalog (Cinder `…/v3/<project>`, Nova `…/v2.1`). No other
 * file builds paths. Ids were already checked (`adapters/openstack/ids.ts`); encoding here is defence in depth.
 */
import { pathSegment } from '../input';

// Refuses (BAD_USER_INPUT, never a URIError) what no encoding makes safe.
const seg = (id: string): string => pathSegment(id);

// Keystone (relative to the auth URL, which ends in /v3)
export const tokensURL = (): string => '/auth/tokens';

// Cinder
export const volumesURL = (): string => '/volumes';
export const volumesDetailURL = (): string => '/volumes/detail';
export const volumeURL = (id: string): string => `/volumes/${seg(id)}`;
export const volumeActionURL = (id: string): string => `/volumes/${seg(id)}/action`;
export const snapshotsURL = (): string => '/snapshots';
export const snapshotsDetailURL = (): string => '/snapshots/detail';
export const snapshotURL = (id: string): string => `/snapshots/${seg(id)}`;
export const attachmentsURL = (): string => '/attachments';
export const attachmentsDetailURL = (): string => '/attachments/detail';
export const attachmentURL = (id: string): string => `/attachments/${seg(id)}`;
export const attachmentActionURL = (id: string): string => `/attachments/${seg(id)}/action`;
export const messagesURL = (): string => '/messages';

// Nova
export const serversDetailURL = (): string => '/servers/detail';
export const serverURL = (id: string): string => `/servers/${seg(id)}`;
export const serverVolumeAttachmentsURL = (serverId: string): string => `/servers/${seg(serverId)}/os-volume_attachments`;
export const serverVolumeAttachmentURL = (serverId: string, volumeId: string): string =>
  `/servers/${seg(serverId)}/os-volume_attachments/${seg(volumeId)}`;
