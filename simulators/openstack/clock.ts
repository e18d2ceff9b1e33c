/**
 * Time, in microseconds since the epoch (JS dates only have milliseconds, but Cinder prints six
 * fractional digits), and the four datetime spellings the services use on the wire.
 */
import { performance } from 'node:perf_hooks';

let lastMicros = 0;

/** Now in µs, strictly increasing so that created_at orders match creation order. */
export function nowMicros(): number {
  const t = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastMicros = t > lastMicros ? t : lastMicros + 1;
  return lastMicros;
}

function parts(us: number): { iso: string; micros: string } {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString(); // 2026-11-22T02:14:30.923Z
  const micros = String(us % 1_000_000).padStart(6, '0');
  return { iso: iso.slice(0, 19), micros };
}

/** Cinder: naive UTC with microseconds, no zone — `2026-11-22T02:14:30.923381`. */
export function cinderTime(us: number | null): string | null {
  if (us === null) return null;
  const p = parts(us);
  return `${p.iso}.${p.micros}`;
}

/** Keystone token times: whole seconds, `2026-11-22T04:07:14.000000Z`. */
export function keystoneTime(us: number): string {
  return `${parts(us).iso}.000000Z`;
}

/** Nova `created`/`updated`: `2026-11-22T03:19:11Z`. */
export function novaTime(us: number): string {
  return `${parts(us).iso}Z`;
}

/** Nova `OS-SRV-USG:launched_at`: `2026-11-22T03:19:12.000000`. */
export function novaUsageTime(us: number | null): string | null {
  return us === null ? null : `${parts(us).iso}.000000`;
}

/** Parses an ISO-8601 time (with or without zone; naive = UTC) to µs, or null. */
export function parseTime(s: string): number | null {
  const naive = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(s);
  const ms = Date.parse(naive ? `${s.length === 10 ? `${s}T00:00:00` : s}Z` : s);
  return Number.isNaN(ms) ? null : ms * 1000;
}
