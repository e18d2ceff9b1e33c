/**
 * Microversion negotiation (microversion_parse + each service's APIVersionRequest): the header
 * value `<service> X.Y` (several may be comma-separated), `latest` = the maximum, absent = the
 * minimum; a malformed string is a 400, an out-of-range one a 406.
 */

/** A parsed microversion: `[major, minor]`. */
export type Version = readonly [number, number];

export function parseVersion(s: string): Version | null {
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(s);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export function versionString(v: Version): string {
  return `${v[0]}.${v[1]}`;
}

export function cmp(a: Version, b: Version): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

/** `v >= min` where `min` is written "3.27". */
export function atLeast(v: Version, min: string): boolean {
  const m = parseVersion(min);
  if (!m) throw new Error(`bad microversion literal ${min}`);
  return cmp(v, m) >= 0;
}

export type Negotiated =
  | { ok: true; version: Version }
  | { ok: false; status: 400; message: string }
  | { ok: false; status: 406; message: string; requested: string };

/**
 * Picks this service's entry from an `OpenStack-API-Version` value (case-insensitive service
 * name), or undefined when the header does not name it.
 */
export function pickServiceVersion(header: string | undefined, serviceType: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(',')) {
    const [svc, ver] = part.trim().split(/\s+/, 2);
    if (svc !== undefined && svc.toLowerCase() === serviceType && ver !== undefined) return ver;
  }
  return undefined;
}

/** Negotiates a requested version string (undefined = header absent) against [min, max]. */
export function negotiate(requested: string | undefined, min: string, max: string): Negotiated {
  const minV = parseVersion(min)!;
  const maxV = parseVersion(max)!;
  if (requested === undefined) return { ok: true, version: minV };
  if (requested.toLowerCase() === 'latest') return { ok: true, version: maxV };
  const v = parseVersion(requested);
  if (!v)
    return {
      ok: false,
      status: 400,
      message: `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`,
    };
  if (cmp(v, minV) < 0 || cmp(v, maxV) > 0) {
    return {
      ok: false,
      status: 406,
      requested,
      message: `Version ${requested} is not supported by the API. Minimum is ${min} and maximum is ${max}.`,
    };
  }
  return { ok: true, version: v };
}
