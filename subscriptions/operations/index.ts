export {
  OperationTracker,
  ownerKey,
  type OperationTrackerOptions,
  type ServiceCredential,
  type StartOperation,
  type WatchedScopes,
} from './tracker';
export { InProcessOperationStore, type OperationStore } from './store';
export { TERMINAL } from './types';
export { RedisOperationStore, DEFAULT_REDIS_KEY_PREFIX, type RedisOperationStoreOptions } from './redis-store';
