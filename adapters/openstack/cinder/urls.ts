/**
 * Every Cinder path the adapter may call, relative to the project's endpoint from the catalog
 * (`…/v3/<project>`). No other file builds them. Ids were already checked (`../ids.ts`);
 * encoding here is defence in depth and refuses (BAD_USER_INPUT, never a URIError) what no
 * encoding makes safe.
 */
import { pathSegment } from '../../contract/input';

const seg = (id: string): string => pathSegment(id);

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
