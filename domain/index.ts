/**
 * The domain layer: one function per use case, between the resolvers (which map GraphQL arguments
 * to a use case's typed input and call it) and the backends (adapters/). A use case finds the
 * backend and the facet it needs, and owns the steps around the backend call: idempotency,
 * operation tracking, the live path's `accepted` notice, and the read back through a fresh loader
 * entry. Inputs come checked (refs decoded, values bounded); parts checked with a backend's rules
 * after its facet is found are given as {@link CheckedFor} functions. Every use case takes the
 * execution context (the caller's credentials, loaders, tracker, idempotency store, live path).
 *
 * Use cases (file):
 * Every use case that changes state takes an optional idempotency key ({@link oncePerKey}; tracked
 * ones through {@link trackedOncePerKey}, which remembers the operation).
 * - volumes: {@link createVolume}, {@link deleteVolume}, {@link extendVolume},
 *   {@link updateVolume} (`volumeUpdates`) — volumes.ts
 * - attachments: {@link attachVolume} (live), {@link detachVolume} (live),
 *   {@link updateServerAttachment} (`serverAttachments`) — attachments.ts
 * - host attachments step by step (`hostAttachments`): {@link reserveHostAttachment} (idempotent),
 *   {@link updateHostAttachment}, {@link completeHostAttachment} — host-attachments.ts
 * - snapshots: {@link createSnapshot} (idempotent), {@link deleteSnapshot}, {@link listSnapshots} — snapshots.ts
 * - a backend's own volume actions (`volumeActions`): {@link runVolumeAction}, {@link volumeImageMetadata} — volume-actions.ts
 * - the catalogue (`registration`): {@link registerVolume}, {@link deregisterVolume} — registration.ts
 * - reads: {@link getVolume}, {@link requireVolume}, {@link completeVolume}, {@link listVolumesAcrossBackends}
 *   (merged across backends), {@link attachmentOf} — reads.ts
 * - the caller's namespace on a backend, named (`callerScope`): {@link callerNamespace} — namespaces.ts
 * - operations: {@link loadOperation} (what the caller may see), {@link operationsOf},
 *   {@link operationTarget}; the steps {@link track}, {@link readBack}, {@link target} — operations.ts
 *
 * Rules (test/architecture.test.ts): nothing here imports `resolvers/` or `server/` (the registry of
 * configured backends and the idempotency store's interface are the domain's: registry.ts,
 * idempotency.ts); no backend kind, credential header or backend `__typename` is named
 * (test/architecture/backend-knowledge.test.ts).
 */
export {
  attachVolume,
  detachVolume,
  updateServerAttachment,
  type AttachVolume,
  type DetachVolume,
  type UpdateServerAttachment,
  type VolumeAttach,
} from './attachments';
export {
  completeHostAttachment,
  reserveHostAttachment,
  updateHostAttachment,
  type CompleteHostAttachment,
  type HostAttachmentRef,
  type ReserveHostAttachment,
  type UpdateHostAttachment,
} from './host-attachments';
export { attachmentId, consumerId, memoized, operationId, snapshotId, volumeId } from './ids';
export {
  IDEMPOTENCY_CLAIM_TTL_MS,
  IDEMPOTENCY_TTL_MS,
  idempotent,
  oncePerKey,
  type IdempotencyEntry,
  type IdempotencyInput,
  type IdempotencyScope,
  type IdempotencyStore,
} from './idempotency';
export type { CheckedFor } from './input';
export { callerNamespace } from './namespaces';
export {
  done,
  loadOperation,
  operationsOf,
  operationTarget,
  readBack,
  target,
  track,
  trackedOncePerKey,
  type OperationTarget,
} from './operations';
export {
  attachmentOf,
  completeVolume,
  getVolume,
  listVolumesAcrossBackends,
  requireVolume,
  type VolumesAcrossBackends,
} from './reads';
export { deregisterVolume, registerVolume, type DeregisterVolume, type RegisterVolume } from './registration';
export {
  createSnapshot,
  deleteSnapshot,
  listSnapshots,
  type CreateSnapshot,
  type DeleteSnapshot,
  type ListSnapshots,
  type SnapshotChange,
} from './snapshots';
export { runVolumeAction, volumeImageMetadata, type RunVolumeAction, type VolumeActionOutcome } from './volume-actions';
export {
  createVolume,
  deleteVolume,
  extendVolume,
  updateVolume,
  type CreateVolume,
  type DeleteVolume,
  type ExtendVolume,
  type UpdateVolume,
  type VolumeChange,
  type VolumeRemoval,
} from './volumes';
