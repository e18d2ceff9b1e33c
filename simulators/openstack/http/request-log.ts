/** The request log: every request the three services answered (control API excluded). */
import type { Service } from './types';

/** One logged request. Bodies and credentials are never logged. */
export interface RequestLogEntry {
  service: Service;
  method: string;
  /** Raw pathname, without the query. */
  path: string;
  /** The raw query string, without `?` ("" when none). */
  query: string;
  /** Query parameters decoded, every value of each key in order. */
  params: Record<string, string[]>;
  /** For `POST …/action` requests, the action's name (the body's single key, e.g. `os-extend`) — never its arguments. */
  action?: string;
  /** Response status; 0 while the request is in flight. */
  status: number;
  /**
   * The microversion header the client sent, verbatim (`volume 3.27`, `compute 2.79`, or the
   * legacy `X-OpenStack-Nova-API-Version` value); null when none.
   */
  microversion: string | null;
  /** When the request arrived (ISO 8601). */
  time: string;
  /** Time to answer, including injected latency. */
  durationMs: number;
}

export class RequestLog {
  private readonly entries: RequestLogEntry[] = [];

  add(e: RequestLogEntry): RequestLogEntry {
    this.entries.push(e);
    return e;
  }

  list(): RequestLogEntry[] {
    return this.entries.map((e) => ({
      ...e,
      params: Object.fromEntries(Object.entries(e.params).map(([k, v]) => [k, [...v]])),
    }));
  }

  clear(): void {
    this.entries.length = 0;
  }
}
