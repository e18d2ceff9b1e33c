export {
  OperationTracker,
  ownerKey,
  type OperationTrackerOptions,
  type ServiceCredential,
  type StartOperation,
  type WatchedScopes,
  type OperationReplication,
} from './tracker';
export {
  InProcessOperationStore,
  isShared,
  type FencedRecord,
  type FencedWrite,
  type OperationStore,
  type SharedOperationStore,
} from './store';
export { TERMINAL } from './types';
export { RedisOperationStore, DEFAULT_REDIS_KEY_PREFIX, type RedisOperationStoreOptions } from './redis-store';
export { OperationKeys } from './redis-keys';
export { RedisOperationReplication, type RedisOperationReplicationOptions } from './replication';
export { lostReplicaReason } from './handover';
