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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'volume-gateway' }, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' } }, destination);
}

export type { Logger };
