export { OperationTracker } from './tracker';
export { ownerKey } from './drive';
export type {
  OperationReplication,
  OperationTrackerOptions,
  ServiceCredential,
  StartOperation,
  WatchedScopes,
} from './tracker-options';
export {
  InProcessOperationStore,
  isShared,
  type FencedRecord,
  type FencedWrite,
  type OperationStore,
  type SharedOperationStore,
} from './store';
export { TERMINAL } from './types';
export { RedisOperationStore, type RedisOperationStoreOptions } from './redis-store';
export { OperationKeys, DEFAULT_REDIS_KEY_PREFIX } from './redis-keys';
export { RedisOperationReplication, type RedisOperationReplicationOptions } from './replication';
export { lostReplicaReason } from './handover';
