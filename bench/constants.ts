/** Shared by the benchmark's processes. */
export const BENCH_TOKEN = 'bench-management-token';

/**
 * Gateway settings that lift the per-caller and per-address caps: benchmark load comes from one
 * token and a few loopback addresses at full speed, so only the process's own limits should bind.
 */
export const UNCAPPED = {
  RATE_LIMIT_CALLER_RPS: '0',
  RATE_LIMIT_ADDRESS_RPS: '0',
  // The TCP connections per peer address (server/http/connection-cap.ts): benchmarks open thousands from one address.
  MAX_CONNECTIONS_PER_ADDRESS: '60000',
  WS_MAX_CONNECTIONS: '60000',
  WS_MAX_CONNECTIONS_PER_ADDRESS: '60000',
  WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '100000',
  LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS: '100000',
  LIVE_MAX_SUBSCRIPTION_BYTES_PER_ADDRESS: String(1024 * 1_048_576),
  LIVE_MAX_START_CHECKS_PER_ADDRESS: '1000000',
} as const;

/** Gateway settings for one simulated Nomad named `bench`, watched with the benchmark's service token. */
export function watchedNomad(simUrl: string): Record<string, string> {
  return { GATEWAY_BACKENDS: `bench=nomad@${simUrl}`, GATEWAY_BACKEND_BENCH_TOKEN: BENCH_TOKEN };
}

/**
 * Gateway settings for the runs that compare calls and CPU per request: no service credential, so
 * no watcher runs and every read goes to the backend (watch-fed reads off); readiness probes after
 * the first one out of the way of the counted calls; caps lifted.
 */
export const UNWATCHED_GATEWAY_ENV = {
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'warn',
  READINESS_PROBE_INTERVAL_MS: '3600000',
  // Its passes would add service reads to the request paths measured (bench/doctor.ts measures it).
  DOCTOR: 'off',
  ...UNCAPPED,
} as const;

/** The line bench/openstack-sim-server.ts prints when it listens; groups: Keystone, Cinder and Nova URLs, project, token. */
export const OPENSTACK_SIM_READY = /OS_URLS keystone=(\S+) cinder=(\S+) nova=(\S+) project=(\S+) token=(\S+)/;
