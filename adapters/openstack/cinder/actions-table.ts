/**
 * Cinder's volume actions by unified name: for each, the wire key of `POST /volumes/{id}/action`,
 * the body builder (`action-requests.ts`), the lowest microversion it needs (with the feature
 * name the refusal gives), the completion rule of the change it starts (none: finished when
 * Cinder answers), and how its answer maps. docs/openstack.md shows the same table. The status
 * words a reset may set are in `action-requests.ts` (attach status) and `results.ts`.
 */
import type { CinderActionName, CinderActionResult } from '../actions/types';
import type { ActionRule } from '../completion/rules';
import { FEATURES } from '../microversions';
import * as b from './action-requests';
import type { ActionOf } from './action-requests';
import { toConnectionInfo, toImageMetadata, toSavedVolume, toUploadedImage } from './results';

/** A lowest microversion and what needs it (for the UNSUPPORTED_BY_BACKEND message). */
export interface Needs {
  version: string;
  feature: string;
}

export interface ActionEntry<N extends CinderActionName> {
  /** The action's key on the wire. */
  wire: string;
  /** Builds the body; checks ids and combinations (BAD_USER_INPUT before any call). */
  body(a: ActionOf<N>): unknown;
  /** The lowest microversion, when the action (with these arguments) needs more than 3.0. */
  needs?(a: ActionOf<N>): Needs | undefined;
  /** The completion rule of the change it starts; absent when Cinder's answer ends it. */
  rule?: ActionRule;
  /** What its answer holds for the caller; absent when nothing. */
  result?(data: unknown): CinderActionResult;
}

const always = (version: string, feature: string) => (): Needs => ({ version, feature });

/** Every unified Cinder action, keyed by its unified name. */
export const CINDER_ACTIONS: { readonly [N in CinderActionName]: ActionEntry<N> } = {
  resetStatus: { wire: 'os-reset_status', body: b.resetStatusBody },
  // Cinder before 3.71 has no such action (400 "There is no such action"): refuse first.
  completeExtend: {
    wire: 'os-extend_volume_completion',
    body: b.completeExtendBody,
    needs: always(FEATURES.volume.extendCompletion, 'completing a volume extend'),
  },
  revertToSnapshot: {
    wire: 'revert',
    body: b.revertBody,
    needs: always(FEATURES.volume.revert, 'reverting to a snapshot'),
    rule: { name: 'volumeSettles', leaves: 'REVERTING' },
  },
  setImageMetadata: { wire: 'os-set_image_metadata', body: b.setImageMetadataBody, result: toImageMetadata },
  unsetImageMetadata: { wire: 'os-unset_image_metadata', body: b.unsetImageMetadataBody },
  legacyAttach: { wire: 'os-attach', body: b.legacyAttachBody },
  legacyDetach: { wire: 'os-detach', body: b.legacyDetachBody },
  unmanage: { wire: 'os-unmanage', body: b.emptyBody, rule: { name: 'volumeGone' } },
  forceDetach: { wire: 'os-force_detach', body: b.forceDetachBody },
  retype: { wire: 'os-retype', body: b.retypeBody, rule: { name: 'volumeSettles', leaves: 'RETYPING' } },
  migrate: {
    wire: 'os-migrate_volume',
    body: b.migrateBody,
    needs: (a) =>
      a.cluster ? { version: FEATURES.volume.migrateToCluster, feature: 'migrating to a cluster' } : undefined,
    rule: { name: 'volumeMigrate' },
  },
  completeMigration: { wire: 'os-migrate_volume_completion', body: b.completeMigrationBody, result: toSavedVolume },
  forceDelete: { wire: 'os-force_delete', body: b.emptyBody, rule: { name: 'volumeGone' } },
  setBootable: { wire: 'os-set_bootable', body: b.setBootableBody },
  uploadToImage: {
    wire: 'os-volume_upload_image',
    body: b.uploadToImageBody,
    rule: { name: 'volumeSettles', leaves: 'UPLOADING' },
    result: toUploadedImage,
  },
  reserve: { wire: 'os-reserve', body: b.emptyBody },
  unreserve: { wire: 'os-unreserve', body: b.emptyBody },
  beginDetaching: { wire: 'os-begin_detaching', body: b.emptyBody },
  rollDetaching: { wire: 'os-roll_detaching', body: b.emptyBody },
  terminateConnection: { wire: 'os-terminate_connection', body: b.terminateConnectionBody },
  initializeConnection: {
    wire: 'os-initialize_connection',
    body: b.initializeConnectionBody,
    result: toConnectionInfo,
  },
  setReadonly: { wire: 'os-update_readonly_flag', body: b.setReadonlyBody },
  reimage: {
    wire: 'os-reimage',
    body: b.reimageBody,
    needs: always(FEATURES.volume.reimage, 'reimaging'),
    rule: { name: 'volumeSettles', leaves: 'DOWNLOADING' },
  },
};

/** The entry of an action, typed by its name. */
export function actionEntry<N extends CinderActionName>(name: N): ActionEntry<N> {
  return CINDER_ACTIONS[name];
}
