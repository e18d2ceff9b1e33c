/** Change events and their log (issue 11's live path; watchers and graphql-ws build on these). */
export { compareCursors, decodeCursor, encodeCursor, type CursorParts } from './cursor';
export type { AppendOptions, EventLog, LogLoss, Replay, ReplayRequest } from './log';
export { EVENT_LOG_DEFAULTS, InProcessEventLog, type InProcessEventLogOptions } from './in-process-log';
export type { ChangeEvent, ChangeInput, ChangeType } from './types';
export { LeaseLostError } from './errors';
export { RedisEventLog, type RedisEventLogOptions, type RedisEventLogStatus } from './redis-log';
