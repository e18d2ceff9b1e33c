/**
 * Failure modes the control API makes at once (README.md "Failure modes"), each the end state a
 * real failure leaves, reached through the same simulated Nova and Cinder code paths as an API
 * call (so Cinder's status, `updated_at`, the BDM and the instance action all move as they would):
 *
 * - `stuckDetach`: a Nova detach whose compute part never answers. Not recorded (the recording's
 *   fake driver always answers); follows nova/compute/api.py `_detach_volume` (Cinder
 *   `os-begin_detaching`, then a cast to nova-compute) and the Cinder force-detach spec's
 *   use case 4 (Cinder `detaching`, the BDM still there).
 * - `danglingBdm`: a Nova detach that fails in nova-compute after Cinder let go, exactly as
 *   nova-26/06-failed-detach.md recorded (Cinder `available`, Nova still lists the attachment).
 * - `deleteServerKeepingAttachments`: a server deleted while Cinder refuses its attachment
 *   deletes. Not recorded; follows nova/compute/manager.py `_shutdown_instance`, which logs
 *   "Ignoring unknown cinder exception for volume …" and goes on destroying the instance, so
 *   Cinder keeps an `attached` attachment to a server that no longer exists (Nova API reference:
 *   a deleted server answers 404 and is not listed).
 * - `shelveOffload`: what nova/compute/manager.py `_terminate_volume_connections` does to each
 *   volume when a server is shelve-offloaded (a new attachment without a connector, then the old
 *   one deleted: the volume is `reserved` while Nova keeps the BDM). Not recorded.
 */
import { nowMicros } from '../clock';
import { removeAttachment, reserveAttachment } from '../cinder/attach-core';
import { beginDetaching } from '../cinder/actions-attach';
import { requestId } from '../ids';
import type { Bdm, Server } from '../model';
import type { SimState } from '../state';
import { scheduleDetach } from './compute';
import type { ActionCaller } from './instance-actions';

/** The server's owner, as the caller of an action the control API starts. */
const owner = (s: Server): ActionCaller => ({ requestId: requestId(), userId: s.userId, projectId: s.projectId });

function bdmOf(state: SimState, serverId: string, volumeId: string): { s: Server; b: Bdm } {
  const s = state.requireServer(serverId);
  const b = s.bdms.find((x) => x.volumeId === volumeId);
  if (!b) throw new Error(`server ${serverId} has no block device mapping of volume ${volumeId}`);
  return { s, b };
}

/** Nova's detach as the API starts it (begin_detaching, then the compute part), with `arm` armed first. */
function detachWith(state: SimState, serverId: string, volumeId: string, arm: () => void): void {
  const { s, b } = bdmOf(state, serverId, volumeId);
  const v = state.requireVolume(volumeId);
  beginDetaching(state, v);
  arm();
  scheduleDetach(state, s, b, v, owner(s));
}

/** The volume goes `detaching` now and stays there; the BDM stays; the event never finishes. */
export function stuckDetach(state: SimState, serverId: string, volumeId: string): void {
  detachWith(state, serverId, volumeId, () => state.faults.stickNextDetach(volumeId));
}

/** After `detachMs` Cinder has no attachment to the server while Nova keeps listing it (nova-26/06). */
export function danglingBdm(state: SimState, serverId: string, volumeId: string): void {
  const s = state.requireServer(serverId);
  if (s.vmState === 'shelved_offloaded') throw new Error('nova-api detaches a shelved-offloaded server itself');
  detachWith(state, serverId, volumeId, () => state.faults.failNextDetach(volumeId));
}

/** The server is gone at once (no `serverDeleteMs`); every Cinder attachment of it stays. */
export function deleteServerKeepingAttachments(state: SimState, serverId: string): void {
  const s = state.requireServer(serverId);
  const action = state.instanceActions.start(s, 'delete', owner(s));
  const ev =
    s.vmState === 'shelved_offloaded'
      ? undefined
      : state.instanceActions.startEvent(action, 'compute_terminate_instance', state.opts.computeHost);
  state.servers.delete(s.id);
  if (ev) state.instanceActions.finishEvent(ev);
  state.instanceActions.markDeleted(s.id);
}

/** The server is `SHELVED_OFFLOADED`; each attached volume is `reserved` with a connector-less attachment. */
export function shelveOffload(state: SimState, serverId: string): void {
  const s = state.requireServer(serverId);
  for (const b of s.bdms) {
    const v = state.volumes.get(b.volumeId);
    const old = v?.attachments.find((a) => a.id === b.attachmentId);
    if (!v || !old) continue;
    const fresh = reserveAttachment(state, v, s.id);
    removeAttachment(state, v, old);
    b.attachmentId = fresh.id;
  }
  s.vmState = 'shelved_offloaded';
  s.powerState = 0;
  s.taskState = null;
  s.updatedAt = nowMicros();
  state.instanceActions.recordCompleted(s, 'shelveOffload', 'compute_shelve_offload_instance', state.opts.computeHost);
}
