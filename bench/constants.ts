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
