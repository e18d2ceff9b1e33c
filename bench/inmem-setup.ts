/** What the in-memory benchmark's runs share (bench/inmemory.ts, bench/inmem-ab.ts): the data set, the gateway's settings, the queries. */
import { UNCAPPED } from './constants';

export const VOLUMES = 100;
export const ATTACHMENTS = 2;

/** Sent by the load; the generated set declares no tokens, so the memory backend is open and the gateway only reads it. */
export const TOKEN_HEADER = { 'x-memory-token': 'bench-memory-token' };

/** The "100 volumes × 2 attachments": every field of the volume and attachment the reference serves. */
export const MEMORY_LIST = `{ volumes(first: ${VOLUMES}) { nodes { id namespace nativeId name status backendStatus sizeBytes createdAt updatedAt attachments { id state access device attachedAt consumer { ... on VolumeHostConsumer { id hostName } } } } } }`;

/** The gateway's environment: memory backend only, seeded, every feature on, tracing loaded but not sampling. */
export const GATEWAY_ENV: Record<string, string> = {
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'info',
  NODE_ENV: 'production',
  ...UNCAPPED,
  GATEWAY_BACKENDS: 'lab=memory',
  GATEWAY_BACKEND_LAB_SEED_VOLUMES: String(VOLUMES),
  GATEWAY_BACKEND_LAB_SEED_ATTACHMENTS: String(ATTACHMENTS),
  // Tracing on (the SDK, the OTLP exporter and the propagators are loaded) with the root sampler off:
  // no span is recorded, so the dead endpoint is never called.
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
  OTEL_TRACES_SAMPLER: 'always_off',
};

/** Matches the gateway's start-up output once the tracing SDK is registered ("tracing on", logged before "ready"); group 1: its URL. */
export const READY_WITH_TRACING = /"tracing on"[\s\S]*ready at (\S+)/;
