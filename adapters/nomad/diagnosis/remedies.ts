/**
 * The remedies the Nomad checks offer, each with what it does and risks, the gateway mutation that
 * applies it (ready to send) where there is one, Nomad's own command line, and who may apply it.
 * A problem lists them from safest to riskiest; the gateway never applies one itself.
 */
import type { Remedy, RemedyMutation } from '../../contract/diagnosis';
import { encodeGlobalId } from '../../contract/ids';
import type { VolumeRef } from '../../contract/model';

const DETACH = `mutation DetachVolume($input: DetachVolumeInput!) {
  detachVolume(input: $input) { operation { id state failureReason } }
}`;

const DEREGISTER = `mutation DeregisterNomadVolume($input: DeregisterNomadVolumeInput!) {
  deregisterNomadVolume(input: $input) { deletedId operation { id state failureReason } }
}`;

const volumeId = (ref: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId });

const mutation = (document: string, input: Record<string, unknown>): RemedyMutation => ({
  document,
  variables: { input },
});

/** Nomad's volume watcher or claim GC frees the claim by itself. */
export const waitForClaimGc = (): Remedy => ({
  action: 'WAIT_FOR_CLAIM_GC',
  does: "Wait: Nomad's claim GC retries the release every csi_volume_claim_gc_interval (5 minutes by default) on volumes unchanged for csi_volume_claim_gc_threshold (5 minutes by default), and the volume watcher retries on every change of the volume.",
  risk: 'Nothing; the volume stays claimed, and a new claim of it may be refused, until then.',
  mutation: null,
  cli: null,
  who: 'NOBODY',
});

/** `nomad volume detach`: unpublish the volume from one node now. */
export const detachFromNode = (ref: VolumeRef, nodeId: string): Remedy => ({
  action: 'DETACH_FROM_NODE',
  does: 'Ask Nomad to unpublish the volume from the node now (node, then controller unpublish) and free the claims of terminal or garbage-collected allocations there; claims of live allocations are left alone.',
  risk: "Little: only finished allocations' claims are released. It fails while the node's plugin is down, and if the node still has the volume mounted outside Nomad's knowledge, that mount is cut.",
  mutation: mutation(DETACH, { volumeId: volumeId(ref), target: { node: { nodeId } } }),
  cli: `nomad volume detach -namespace=${ref.namespace} ${ref.nativeId} ${nodeId}`,
  who: 'VOLUME_WRITER',
});

/** `nomad system gc`: every garbage collection now, the claim GC with no age threshold among them. */
export const runSystemGc = (): Remedy => ({
  action: 'RUN_SYSTEM_GC',
  does: "Run all of Nomad's garbage collections now, the claim GC among them with no age threshold, which retries the release of every volume's finished claims.",
  risk: 'Collects every terminal job, evaluation, deployment and allocation of the cluster at once, not only this claim: their status history is gone, also for other teams.',
  mutation: null,
  cli: 'nomad system gc',
  who: 'ADMIN',
});

/** `nomad volume deregister -force`: Nomad forgets the volume. */
export const forceDeregister = (ref: VolumeRef): Remedy => ({
  action: 'FORCE_DEREGISTER',
  does: 'Remove the volume from Nomad with its claims (allowed only when every claiming allocation is terminal or gone); register it again to use it.',
  risk: 'Nomad no longer unpublishes it: the storage may stay attached or mounted on the node, and a new registration of the same external volume may then fail to attach until that is cleaned up by hand.',
  mutation: mutation(DEREGISTER, { volumeId: volumeId(ref), force: true }),
  cli: `nomad volume deregister -namespace=${ref.namespace} -force ${ref.nativeId}`,
  who: 'VOLUME_WRITER',
});

/** Bring a node plugin instance back; Nomad then releases the claims on that node. */
export const restoreNodePlugin = (
  pluginId: string,
  nodeId: string | null,
  pluginAllocationId: string | null,
): Remedy => ({
  action: 'RESTORE_NODE_PLUGIN',
  does: `Bring the node plugin of "${pluginId}" back ${nodeId === null ? 'on the nodes' : `on node ${nodeId}`} (restart its allocation, or run its job there); then Nomad's claim GC, or a detach, releases the claim.`,
  risk: 'Nothing to the volume; restarting a plugin interrupts the plugin only.',
  mutation: null,
  cli:
    pluginAllocationId === null
      ? `nomad plugin status -verbose ${pluginId}`
      : `nomad alloc restart ${pluginAllocationId}`,
  who: 'OPERATOR',
});

/** Bring a controller plugin instance back. */
export const restoreController = (pluginId: string): Remedy => ({
  action: 'RESTORE_CONTROLLER_PLUGIN',
  does: `Bring a controller of "${pluginId}" back (find its allocations with the command, restart or run its job); Nomad then publishes and unpublishes the volume again.`,
  risk: 'Nothing to the volume; until then no allocation can claim it and no claim of it can be released.',
  mutation: null,
  cli: `nomad plugin status -verbose ${pluginId}`,
  who: 'OPERATOR',
});
