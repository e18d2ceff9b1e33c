/** What every service handler receives and returns. */
import type { IncomingHttpHeaders } from 'node:http';

export type Service = 'keystone' | 'cinder' | 'nova';

export const SERVICES: readonly Service[] = ['keystone', 'cinder', 'nova'];

export interface SimRequest {
  service: Service;
  method: string;
  /** Raw pathname (percent-escapes kept), without the query. */
  path: string;
  /** Raw query string without `?`. */
  rawQuery: string;
  /** Query pairs in order, decoded like Python's parse_qsl (`+` is a space). */
  query: Array<[string, string]>;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Whether the request carried a body (Content-Length > 0 or chunked). */
  hasBody: boolean;
  /** `req-<uuid>` for this request (x-openstack-request-id). */
  requestId: string;
  /** scheme://host[:port] as the client addressed us (for links). */
  base: string;
}

export interface SimResponse {
  status: number;
  /** Reason phrase when it differs from Node's default (Keystone's `201 CREATED`). */
  statusText?: string;
  headers: Record<string, string | string[]>;
  body: string | null;
}

/** A single header value (first when repeated). */
export function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Parses a query string like `urllib.parse.parse_qsl(keep_blank_values=True)`. */
export function parseQuery(raw: string): Array<[string, string]> {
  if (raw === '') return [];
  const out: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    out.push([decode(k), decode(v)]);
  }
  return out;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** Splits a raw path into decoded, non-empty segments. */
export function segments(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}
