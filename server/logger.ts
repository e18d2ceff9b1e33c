/**
 * Structured JSON logs through pino. Credentials never reach a log line: no code logs headers,
 * and these paths are redacted as a second guard.
 */
import pino, { type Logger } from 'pino';
import { CREDENTIAL_HEADERS } from './credentials';

export const REDACTED_PATHS = [
  'token',
  'secrets',
  '*.token',
  '*.secrets',
  'headers.authorization',
  ...CREDENTIAL_HEADERS.map((h) => `headers["${h}"]`),
  'variables.input.secrets',
];

/**
 * A line's one message field is pino's `msg`: a logged object's own top-level `message` (a health
 * result, a backend's text) is kept as `detail`, so log pipelines never see two.
 */
function oneMessageField(o: Record<string, unknown>): Record<string, unknown> {
  if (!('message' in o)) return o;
  const { message, ...rest } = o;
  return { ...rest, detail: message };
}

/** A logger at `level` writing to `destination` (the gateway's: server/log-stdout.ts; default: pino's stdout destination). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'volume-gateway' },
      formatters: { log: oneMessageField },
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    },
    destination,
  );
}

export type { Logger };
