/**
 * Logs through pino: JSON lines, or human-readable ones (`LOG_FORMAT=pretty`, the default on a
 * terminal and in demo mode) made by pino-pretty in this thread, with no transport or worker:
 * each serialized record is reformatted on its way to the same destination, so both formats go
 * through the gateway's bounded stdout buffer (server/log-stdout.ts). Credentials never reach a
 * log line: no code logs headers, and these paths are redacted as a second guard, before either
 * format sees the record.
 */
import pino, { type Logger } from 'pino';
import type { LogFormat } from './config-definition';
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

/**
 * The format when `LOG_FORMAT` is not set: lines for a person when one is likely reading (stdout
 * is a terminal, or the demo runs), JSON for a log pipeline otherwise.
 */
export function chooseLogFormat(setting: LogFormat | undefined, o: { tty: boolean; demo: boolean }): LogFormat {
  return setting ?? (o.tty || o.demo ? 'pretty' : 'json');
}

/** `destination`, given each JSON line as pino-pretty writes it: one line a record, the time local, colors on a terminal. */
function prettyInto(destination: pino.DestinationStream): pino.DestinationStream {
  // Loaded only when used: a JSON gateway never loads pino-pretty.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
  const { prettyFactory } = require('pino-pretty') as typeof import('pino-pretty');
  const pretty = prettyFactory({
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
  return { write: (line: string) => destination.write(pretty(line)) };
}

/**
 * A logger at `level` writing to `destination` (the gateway's: server/log-stdout.ts; default:
 * pino's stdout destination) in `format`.
 * @param format @default 'json'
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'volume-gateway' },
    formatters: { log: oneMessageField },
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
  };
  if (format === 'json') return pino(options, destination);
  return pino(options, prettyInto(destination ?? pino.destination(1)));
}

export type { Logger };
