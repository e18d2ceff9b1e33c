/**
 * The bodies of Cinder's volume actions (`POST /volumes/{id}/action {"<key>": body}`), one
 * function per unified action, taking the typed action and writing Cinder's keys and words.
 * Ids are checked here (BAD_USER_INPUT before any call). `actions-table.ts` pairs each with its
 * wire key, microversion and completion rule.
 */
import type { CinderAction, CinderVolumeAttachStatus, CinderVolumeMigrationStatus } from '../actions/types';
import { BadUserInputError, inputField } from '../../contract/errors';
import { checkedUuid } from '../ids';
import { stringMap } from '../../contract/key-values';
import { connectorBody } from './attachment-requests';
import { CINDER_STATUS_WORDS, MIGRATION_STATUS_WORDS } from './results';

/** One unified action of the given name. */
export type ActionOf<N extends CinderAction['action']> = Extract<CinderAction, { action: N }>;

/** Attach statuses a reset may set, in Cinder's words. */
export const ATTACH_STATUS_WORDS: Readonly<Record<CinderVolumeAttachStatus, string>> = {
  ATTACHED: 'attached',
  DETACHED: 'detached',
};

export function resetStatusBody(a: ActionOf<'resetStatus'>): Record<string, string> {
  const body: Record<string, string> = {};
  if (a.status !== undefined) {
    if (a.status === 'OTHER')
      throw BadUserInputError.atField('status', () => 'OTHER names no Cinder status: give the status to set');
    body.status = CINDER_STATUS_WORDS[a.status];
  }
  if (a.attachStatus !== undefined) body.attach_status = ATTACH_STATUS_WORDS[a.attachStatus];
  if (a.migrationStatus !== undefined)
    body.migration_status = MIGRATION_STATUS_WORDS[a.migrationStatus satisfies CinderVolumeMigrationStatus];
  if (Object.keys(body).length === 0)
    throw BadUserInputError.atField('', () => 'nothing to reset: give status, attachStatus or migrationStatus');
  return body;
}

export const completeExtendBody = (a: ActionOf<'completeExtend'>): unknown => ({ error: a.error });

export const revertBody = (a: ActionOf<'revertToSnapshot'>): unknown => ({
  snapshot_id: checkedUuid(a.snapshotId, inputField('snapshotId')),
});

export const setImageMetadataBody = (a: ActionOf<'setImageMetadata'>): unknown => ({ metadata: stringMap(a.metadata) });

export const unsetImageMetadataBody = (a: ActionOf<'unsetImageMetadata'>): unknown => ({ key: a.key });

export function legacyAttachBody(a: ActionOf<'legacyAttach'>): unknown {
  if (Boolean(a.serverId) === Boolean(a.hostName))
    throw BadUserInputError.atField('', () => 'a legacy attach needs exactly one of serverId and hostName');
  const to = a.serverId
    ? { instance_uuid: checkedUuid(a.serverId, inputField('serverId')) }
    : { host_name: a.hostName };
  return { ...to, mountpoint: a.mountpoint, mode: a.readOnly ? 'ro' : 'rw' };
}

export const legacyDetachBody = (a: ActionOf<'legacyDetach'>): unknown => ({
  attachment_id: a.attachmentId ? checkedUuid(a.attachmentId, inputField('attachmentId')) : null,
});

/** For actions whose body is an empty object. */
export const emptyBody = (): unknown => ({});

export function forceDetachBody(a: ActionOf<'forceDetach'>): unknown {
  const body: Record<string, unknown> = {};
  if (a.attachmentId) body.attachment_id = checkedUuid(a.attachmentId, inputField('attachmentId'));
  if (a.connector) body.connector = connectorBody(a.connector);
  return body;
}

export const retypeBody = (a: ActionOf<'retype'>): unknown => ({
  new_type: a.newType,
  migration_policy: a.onDemandMigration ? 'on-demand' : 'never',
});

export function migrateBody(a: ActionOf<'migrate'>): unknown {
  if (!a.host && !a.cluster)
    throw BadUserInputError.atField('host', (name) => `migrating needs ${name('host')} or ${name('cluster')}`);
  const body: Record<string, unknown> = {};
  if (a.host) body.host = a.host;
  if (a.cluster) body.cluster = a.cluster;
  if (a.forceHostCopy !== undefined) body.force_host_copy = a.forceHostCopy;
  if (a.lockVolume !== undefined) body.lock_volume = a.lockVolume;
  return body;
}

export const completeMigrationBody = (a: ActionOf<'completeMigration'>): unknown => ({
  new_volume: checkedUuid(a.newVolumeId, inputField('newVolumeId')),
  error: a.error,
});

export const setBootableBody = (a: ActionOf<'setBootable'>): unknown => ({ bootable: a.bootable });

export function uploadToImageBody(a: ActionOf<'uploadToImage'>): unknown {
  const body: Record<string, unknown> = { image_name: a.imageName };
  if (a.force !== undefined) body.force = a.force;
  if (a.diskFormat !== undefined) body.disk_format = a.diskFormat;
  if (a.containerFormat !== undefined) body.container_format = a.containerFormat;
  if (a.visibility !== undefined) body.visibility = a.visibility;
  if (a.protected !== undefined) body.protected = a.protected;
  return body;
}

export const terminateConnectionBody = (a: ActionOf<'terminateConnection'>): unknown => ({
  connector: a.connector ? connectorBody(a.connector) : null,
});

export const initializeConnectionBody = (a: ActionOf<'initializeConnection'>): unknown => ({
  connector: connectorBody(a.connector),
});

export const setReadonlyBody = (a: ActionOf<'setReadonly'>): unknown => ({ readonly: a.readonly });

export const reimageBody = (a: ActionOf<'reimage'>): unknown => ({
  image_id: checkedUuid(a.imageId, inputField('imageId')),
  reimage_reserved: a.reimageReserved,
});
