/**
 * Injected unavailability. Two shapes, because a real outage can look like either:
 * - `service`: the service's own 503 fault (Cinder/Nova `{"serviceUnavailable": …}` with webob's
 *   explanation, Keystone's `{"error": {…}}`), as when the API process is up but overloaded or
 *   its dependencies are down;
 * - `proxy`: what HAProxy answers when no API backend is up (its stock text/html page) — the
 *   usual sight in front of a real cloud.
 */
import { pyDumps } from '../pyjson';
import type { Service, SimResponse } from './types';

export type OutageStyle = 'service' | 'proxy';

export interface OutageSpec {
  service: Service;
  /** Unavailable for the next N requests. */
  count?: number;
  /** Unavailable for this long. With `count` too, the outage ends at whichever comes first. */
  forMs?: number;
  /** @default 'service' */
  style?: OutageStyle;
}

export interface Outage {
  remaining: number | null;
  until: number | null;
  style: OutageStyle;
}

const EXPLANATION = 'The server is currently unavailable. Please try again at a later time.';

export function toOutage(spec: OutageSpec, now: number): Outage {
  return {
    remaining: spec.count === undefined ? null : Math.max(0, Math.floor(spec.count)),
    until: spec.forMs === undefined ? null : now + Math.max(0, spec.forMs),
    style: spec.style ?? 'service',
  };
}

/** Whether the outage applies to this request (consuming one of its `count`). */
export function outageApplies(o: Outage, now: number): boolean {
  if (o.until !== null && now >= o.until) return false;
  if (o.remaining !== null) {
    if (o.remaining <= 0) return false;
    o.remaining--;
  }
  return true;
}

export function outageExhausted(o: Outage, now: number): boolean {
  return (o.until !== null && now >= o.until) || (o.remaining !== null && o.remaining <= 0);
}

export function unavailableResponse(service: Service, style: OutageStyle): SimResponse {
  if (style === 'proxy') {
    return {
      status: 503,
      headers: { 'Content-Type': 'text/html', 'Cache-Control': 'no-cache', Connection: 'close' },
      body: '<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n',
    };
  }
  if (service === 'keystone') {
    return {
      status: 503,
      statusText: 'SERVICE UNAVAILABLE',
      headers: { 'Content-Type': 'application/json', Vary: 'X-Auth-Token' },
      body: `${JSON.stringify({ error: { code: 503, message: EXPLANATION, title: 'Service Unavailable' } })}\n`,
    };
  }
  return {
    status: 503,
    headers: { 'Content-Type': service === 'nova' ? 'application/json; charset=UTF-8' : 'application/json' },
    body: pyDumps({ serviceUnavailable: { code: 503, message: EXPLANATION } }),
  };
}
