/** Shared by the benchmark's processes. */
export const BENCH_TOKEN = 'bench-management-token';
