/** Change events and their log (issue 11's live path; watchers and graphql-ws build on these). */
export { decodeCursor, encodeCursor, type CursorParts } from './cursor';
export type { EventLog, Replay, ReplayRequest } from './log';
export { EVENT_LOG_DEFAULTS, InProcessEventLog, type InProcessEventLogOptions } from './in-process-log';
export type { ChangeEvent, ChangeInput, ChangeType } from './types';
