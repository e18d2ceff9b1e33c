/** The event stream path (the blocking list uses `volumes/urls.ts`). */
export const eventStreamURL = (): string => '/v1/event/stream';
