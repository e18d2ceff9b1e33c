export { WatcherLeases } from './watcher-leases';
export {
  LEASE_DEFAULTS,
  LeaseOptionError,
  LeasesStoppedError,
  defaultReplicaId,
  type LeaseChange,
  type LeaseChangeReason,
  type LeaseErrorOp,
  type LeaseHolder,
  type LeaseStats,
  type WatcherLeasesOptions,
} from './options';
export { fenceKey, leaseKey, parseFenceToken, RESET_HOLD } from './scripts';
export { leaseClock, type LeaseClock } from './clock';
