/**
 * Microversions: discovered from each service's version document, then sent on every call as
 * `OpenStack-API-Version: volume 3.x` / `compute 2.x`. The gateway asks for the highest version
 * both it and the cloud know, and checks a feature's minimum before calling (docs/openstack.md
 * lists them).
 */

/** A `major.minor` microversion. */
export class Microversion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  static parse(s: string): Microversion | null {
    const m = /^(\d+)\.(\d+)$/.exec(s.trim());
    return m ? new Microversion(Number(m[1]), Number(m[2])) : null;
  }

  atLeast(other: Microversion | string): boolean {
    const o = typeof other === 'string' ? (Microversion.parse(other) as Microversion) : other;
    return this.major > o.major || (this.major === o.major && this.minor >= o.minor);
  }

  min(other: Microversion): Microversion {
    return this.atLeast(other) ? other : this;
  }

  toString(): string {
    return `${this.major}.${this.minor}`;
  }
}

/** Highest microversions whose behaviour this adapter knows; newer clouds are asked for these. */
export const KNOWN_MAX = { volume: new Microversion(3, 71), compute: new Microversion(2, 101) } as const;

/**
 * Feature minimums the adapter checks before calling (the microversion histories:
 * openstack/cinder cinder/api/openstack/api_version_request.py, openstack/nova
 * nova/api/openstack/api_version_request.py).
 */
export const FEATURES = {
  volume: {
    attachmentsApi: '3.27',
    attachmentComplete: '3.44',
    attachmentMode: '3.54',
    revert: '3.40',
    extendInUse: '3.42',
    deleteForce: '3.23',
    withCount: '3.45',
    messages: '3.3',
    reimage: '3.68',
    extendCompletion: '3.71',
    migrateToCluster: '3.16',
  },
  compute: {
    attachTag: '2.49',
    deleteOnTermination: '2.79',
    attachmentIds: '2.89',
    updateNonSwap: '2.85',
    attachAsync: '2.101',
    /** Members see an instance action's events (and their `result`) from here; admins always. */
    actionEvents: '2.51',
  },
} as const;

/** Service version range from a version document (`{"versions":[…]}` or `{"version":{…}}`). */
export function rangeFromVersionDocument(
  body: unknown,
  wantId: RegExp,
): { min: Microversion; max: Microversion } | null {
  const b = body as { version?: Record<string, unknown>; versions?: Array<Record<string, unknown>> };
  const candidates = b.version ? [b.version] : (b.versions ?? []);
  const v = candidates.find((c) => typeof c.id === 'string' && wantId.test(c.id)) ?? candidates[0];
  if (!v) return null;
  // A service without microversions reports empty strings: treat it as its base version.
  const text = (x: unknown): string => (typeof x === 'string' ? x : '');
  const max = Microversion.parse(text(v.version)) ?? Microversion.parse(text(v.id).replace(/^v/, ''));
  const min = Microversion.parse(text(v.min_version)) ?? max;
  return max && min ? { min, max } : null;
}
