/**
 * Failure modes the volume doctor finds (docs/nomad.md, "Volume doctor"), each following what
 * Nomad's own code does when the failure happens (hashicorp/nomad at the commit docs/upstream.md
 * names). Each is a raft write like the change it stands for (state.ts `apply`).
 *
 * - A failed allocation whose claims the volume watcher could not release (`failAllocation` with
 *   `holdClaims`): the claims stay, counted, until the claim GC or a detach retries the unpublish.
 * - A node plugin instance that stopped on one node (`setNodePluginHealth`): claims on that node
 *   cannot be unpublished until it is healthy again.
 * - Nomad's claim GC, forced (`runClaimGC`, what `nomad system gc` runs for volumes).
 */
import { allocTerminal } from './model';
import { NotFoundError, type SimState } from './state';
import { setAllocationStatus } from './cluster';

/**
 * The allocation fails (client status `failed`). With `holdClaims`, the volume watcher's release of
 * its claims fails once, so they stay on their volumes (in ReadAllocs/WriteAllocs, still counted by
 * the claim rules: `HasFreeWriteClaims`) until the claim GC (`runClaimGC`) or a detach retries it.
 *
 * Upstream: the volume watcher releases a volume's past claims when the volume changes and only
 * logs a failed unpublish ("error releasing volume claims", nomad/volumewatcher/volume_watcher.go
 * `volumeReap`); the next attempt is the periodic claim GC (nomad/core_sched.go
 * `csiVolumeClaimGC`, every `csi_volume_claim_gc_interval`, 5 min by default: nomad/config.go) or
 * an operator's `nomad volume detach`. Before hashicorp/nomad#14484 ("failed allocation should not
 * block its own controller unpublish", commit f2186be) a failed allocation's own unpublish was
 * mishandled this way every time: the server still saw the allocation running when its client sent
 * the unpublish, and the replacement claim failed "until a GC is run". Reports of the claims that
 * stay: hashicorp/nomad#10927, #12346, #15415.
 */
export function failAllocation(st: SimState, id: string, o: { holdClaims?: boolean } = {}): void {
  if (!st.allocs.has(id)) throw new NotFoundError(`allocation not found: ${id}`);
  if (o.holdClaims) st.heldReleases.add(id);
  setAllocationStatus(st, id, { clientStatus: 'failed' });
}

/**
 * The node plugin instance of `pluginId` on `nodeId` stops (`healthy: false`) or is running again.
 * A stopped instance stays listed, unhealthy: its client's last fingerprint after shutdown marks it
 * so (client/pluginmanager/csimanager/instance.go `runLoop`, fingerprint.go "failed fingerprinting
 * with error"). While it is unhealthy, unpublishing a claim on that node fails
 * (`SimState.nodeUnpublishFailure`), so a terminal allocation's claims there stay; once healthy,
 * nothing retries them until the claim GC or a detach, as in Nomad, whose volume watcher is woken by
 * volume changes, not plugin ones.
 */
export function setNodePluginHealth(st: SimState, pluginId: string, nodeId: string, healthy: boolean): void {
  const p = st.plugins.get(pluginId);
  if (!p) throw new NotFoundError(`plugin not found: ${pluginId}`);
  if (!st.nodes.has(nodeId)) throw new NotFoundError(`node not found: ${nodeId}`);
  st.apply((index) => {
    const now = st.now();
    p.nodeHealth.set(nodeId, {
      healthy,
      HealthDescription: healthy
        ? 'healthy'
        : // The gRPC client is closed before the last fingerprint; the error's text is derived.
          'failed fingerprinting with error: rpc error: code = Canceled desc = grpc: the client connection is closing',
      UpdateTime: now,
    });
    p.ModifyIndex = index;
    p.ModifyTime = now;
    return { tables: ['csi_plugins'], keys: [`plugin:${pluginId}`], events: st.pluginEvent(pluginId, index) };
  });
}

/**
 * Nomad's claim GC, forced (`nomad system gc` → nomad/core_sched.go `forceGC` →
 * `csiVolumeClaimGC` with no age threshold): every volume whose claims belong to terminal or
 * garbage-collected allocations has them released again. A release that still cannot be made (the
 * node plugin is down) stays. Returns how many allocations' claims it retried.
 */
export function runClaimGC(st: SimState): number {
  const past = new Set<string>();
  for (const v of st.volumes.values()) {
    for (const id of [...(v.ReadAllocs?.keys() ?? []), ...(v.WriteAllocs?.keys() ?? [])]) {
      const a = st.allocs.get(id);
      if (!a || allocTerminal(a)) past.add(id);
    }
  }
  for (const id of past) {
    st.heldReleases.delete(id);
    st.freeAllocClaims(id);
  }
  return past.size;
}
