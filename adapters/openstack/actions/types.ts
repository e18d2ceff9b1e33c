/**
 * Cinder's volume actions that have no core counterpart, by unified name. The OpenStack adapter's
 * action table maps each to its wire key, body, minimum microversion and completion rule; nothing
 * outside `adapters/openstack/` knows the wire words.
 */
import type { HostConnector } from '../../contract/call-inputs';
import type { VolumeActionResult } from '../../contract/capabilities';
import type { KeyValue } from '../../contract/model';
import type { CinderVolumeStatus } from '../model';

/** Attach status a reset may set. */
export type CinderVolumeAttachStatus = 'ATTACHED' | 'DETACHED';

/** Migration status a reset may set. */
export type CinderVolumeMigrationStatus = 'MIGRATING' | 'ERROR' | 'SUCCESS' | 'COMPLETING' | 'NONE' | 'STARTING';

/** One Cinder volume action. */
export type CinderAction =
  | {
      action: 'resetStatus';
      status?: CinderVolumeStatus;
      attachStatus?: CinderVolumeAttachStatus;
      migrationStatus?: CinderVolumeMigrationStatus;
    }
  | { action: 'completeExtend'; error: boolean }
  | { action: 'revertToSnapshot'; snapshotId: string }
  | { action: 'setImageMetadata'; metadata: KeyValue[] }
  | { action: 'unsetImageMetadata'; key: string }
  | { action: 'legacyAttach'; serverId?: string; hostName?: string; mountpoint: string; readOnly: boolean }
  | { action: 'legacyDetach'; attachmentId?: string }
  | { action: 'unmanage' }
  | { action: 'forceDetach'; attachmentId?: string; connector?: HostConnector }
  | { action: 'retype'; newType: string; onDemandMigration: boolean }
  | { action: 'migrate'; host?: string; cluster?: string; forceHostCopy?: boolean; lockVolume?: boolean }
  | { action: 'completeMigration'; newVolumeId: string; error: boolean }
  | { action: 'forceDelete' }
  | { action: 'setBootable'; bootable: boolean }
  | {
      action: 'uploadToImage';
      imageName: string;
      force?: boolean;
      diskFormat?: string;
      containerFormat?: string;
      visibility?: string;
      protected?: boolean;
    }
  | { action: 'reserve' }
  | { action: 'unreserve' }
  | { action: 'beginDetaching' }
  | { action: 'rollDetaching' }
  | { action: 'terminateConnection'; connector: HostConnector | null }
  | { action: 'initializeConnection'; connector: HostConnector }
  | { action: 'setReadonly'; readonly: boolean }
  | { action: 'reimage'; imageId: string; reimageReserved: boolean };

/** The unified action names. */
export type CinderActionName = CinderAction['action'];

/** What a Cinder action returns besides the volume itself (the contract's neutral result). */
export type CinderActionResult = VolumeActionResult;
