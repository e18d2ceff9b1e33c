/**
 * The storage provider behind a controller plugin: what a CSI controller (e.g. the EBS driver)
 * would create, list, snapshot and attach. Nomad only talks to it through the plugin RPCs
 * (ControllerCreateVolume, ListVolumes, CreateSnapshot, …), so the shapes here are the CSI
 * responses that Nomad copies into its replies (hashicorp/nomad nomad/csi_endpoint.go `Create`,
 * `ListExternal`, `CreateSnapshot`).
 */
import { randomBytes } from 'node:crypto';
import type { ProviderSnapshot, ProviderVolume } from './model';

/** A provider RPC failure; the message is what Nomad relays. */
export class ProviderError extends Error {}

function hexId(prefix: string): string {
  return prefix + randomBytes(9).toString('hex').slice(0, 17);
}

export class StorageProvider {
  readonly volumes = new Map<string, ProviderVolume>();
  readonly snapshots = new Map<string, ProviderSnapshot>();

  /** ControllerCreateVolume: a new `vol-<17 hex>` of the requested size. */
  createVolume(capacity: bigint, opts: { snapshotId: string; cloneId: string }): ProviderVolume {
    const v: ProviderVolume = {
      ExternalID: hexId('vol-'),
      CapacityBytes: capacity,
      VolumeContext: null,
      CloneID: opts.cloneId,
      SnapshotID: opts.snapshotId,
      PublishedExternalNodeIDs: [],
      IsAbnormal: false,
      Status: '',
    };
    this.volumes.set(v.ExternalID, v);
    return v;
  }

  /** Adds (or replaces) a provider volume as-is (seeding). */
  putVolume(v: ProviderVolume): void {
    this.volumes.set(v.ExternalID, v);
  }

  /** ControllerDeleteVolume: idempotent, like the EBS driver (missing volume is success). */
  deleteVolume(externalId: string, _secrets?: Map<string, string> | null): void {
    this.volumes.delete(externalId);
  }

  /** ControllerExpandVolume. */
  expandVolume(externalId: string, capacity: bigint): bigint {
    const v = this.volumes.get(externalId);
    if (!v) throw new ProviderError(`rpc error: code = NotFound desc = Volume not found`);
    if (capacity > v.CapacityBytes) v.CapacityBytes = capacity;
    return v.CapacityBytes;
  }

  /** ControllerPublishVolume / ControllerUnpublishVolume bookkeeping. */
  publish(externalId: string, nodeId: string): void {
    const v = this.volumes.get(externalId);
    if (v && !v.PublishedExternalNodeIDs.includes(nodeId)) v.PublishedExternalNodeIDs.push(nodeId);
  }

  unpublish(externalId: string, nodeId: string): void {
    const v = this.volumes.get(externalId);
    if (v) v.PublishedExternalNodeIDs = v.PublishedExternalNodeIDs.filter((n) => n !== nodeId);
  }

  /**
   * ListVolumes with CSI paging: `startingToken` is the opaque token returned by the previous
   * page (here the ExternalID of the first entry of the next page).
   */
  listVolumes(maxEntries: number, startingToken: string): { entries: ProviderVolume[]; nextToken: string } {
    return page([...this.volumes.values()], (v) => v.ExternalID, maxEntries, startingToken);
  }

  /** CreateSnapshot: snapshots start pending (IsReady false) and become ready shortly after. */
  createSnapshot(externalSourceVolumeId: string, now: Date): ProviderSnapshot {
    const src = this.volumes.get(externalSourceVolumeId);
    const s: ProviderSnapshot = {
      ID: hexId('snap-'),
      ExternalSourceVolumeID: externalSourceVolumeId,
      SizeBytes: src?.CapacityBytes ?? 0n,
      CreateTime: BigInt(Math.floor(now.getTime() / 1000)),
      IsReady: false,
      readyAt: now.getTime() + 50,
    };
    this.snapshots.set(s.ID, s);
    return s;
  }

  putSnapshot(s: ProviderSnapshot): void {
    this.snapshots.set(s.ID, s);
  }

  /** DeleteSnapshot: idempotent. Secrets are accepted and not checked. */
  deleteSnapshot(id: string, _secrets?: Map<string, string> | null): void {
    this.snapshots.delete(id);
  }

  listSnapshots(
    maxEntries: number,
    startingToken: string,
    _secrets?: Map<string, string> | null,
  ): { entries: ProviderSnapshot[]; nextToken: string } {
    return page([...this.snapshots.values()], (s) => s.ID, maxEntries, startingToken);
  }
}

function page<T>(
  all: T[],
  id: (t: T) => string,
  maxEntries: number,
  startingToken: string,
): { entries: T[]; nextToken: string } {
  let start = 0;
  if (startingToken !== '') {
    start = all.findIndex((t) => id(t) === startingToken);
    if (start < 0)
      throw new ProviderError(
        `rpc error: code = Aborted desc = invalid starting token ${JSON.stringify(startingToken)}`,
      );
  }
  const end = maxEntries > 0 ? start + maxEntries : all.length;
  const entries = all.slice(start, end);
  const next = all[end];
  return { entries, nextToken: next === undefined ? '' : id(next) };
}
