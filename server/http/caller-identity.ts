/**
 * Who a request is from, for per-caller limits. Transport-neutral (headers as a plain record plus
 * the peer address), so graphql-ws can key its connections the same way.
 *
 * - `callerKey`: a fingerprint of the credential headers the gateway passes through
 *   (each kind's `<header>[-<backend>]`, see server/credentials.ts) when
 *   any is sent, else the client address. The fingerprint is an HMAC-SHA-256 under a key drawn
 *   at start, so raw tokens are never kept and the keys mean nothing outside this process.
 * - `addressKey`: the client address (IPv6 by its /64 prefix, the block one host usually owns),
 *   charged for every request whatever its credentials. A caller that rotates invented tokens
 *   gets a fresh caller budget each time, but still spends its address's.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { isCredentialHeader } from '../credentials';

/** Headers as node:http and graphql-ws's upgrade request give them. */
export type PlainHeaders = Record<string, string | string[] | undefined>;

/** The keys one request is limited by. */
export interface CallerIdentity {
  /** `cred:<hmac hex>` or `addr:<address>`. */
  callerKey: string;
  /** `addr:<address>`. */
  addressKey: string;
  /** The client address the keys use (after `TRUST_PROXY_HOPS`). */
  address: string;
  /** Whether credential headers were sent (the caller key is their fingerprint). */
  hasCredentials: boolean;
}

const fingerprintKey = randomBytes(32);

/** As server/credentials.ts reads a header: the first value, trimmed; empty means not sent. */
const headerValue = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim();

/** HMAC-SHA-256 of every credential header (name and value), in name order; undefined if none. */
export function credentialFingerprint(headers: PlainHeaders): string | undefined {
  const names = Object.keys(headers)
    .map((n) => n.toLowerCase())
    .filter((n) => isCredentialHeader(n) && headerValue(headers[n]) !== '')
    .sort();
  if (names.length === 0) return undefined;
  const mac = createHmac('sha256', fingerprintKey);
  for (const n of names) {
    mac.update(`${n}\0${headerValue(headers[n])}\n`);
  }
  return mac.digest('hex');
}

/** The address limits are keyed by: IPv4 as is (also when IPv4-mapped), IPv6 by its /64. */
export function addressBucket(address: string): string {
  const a = address.trim().toLowerCase();
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  if (!isIPv6(a)) return a;
  // Expand `::` to get the first four groups.
  const [head = '', tail] = a.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client address: the peer's, or with `trustProxyHops` reverse proxies in front, the entry
 * that many from the right of `X-Forwarded-For` (the last one the trusted proxies appended).
 * Entries further left are set by the client and never trusted.
 */
export function clientAddress(headers: PlainHeaders, peer: string | undefined, trustProxyHops: number): string {
  const direct = peer ?? 'unknown';
  if (trustProxyHops <= 0) return direct;
  const raw = headers['x-forwarded-for'];
  const list = (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const chain = [...list, direct];
  return chain[Math.max(0, chain.length - 1 - trustProxyHops)]!;
}

export function callerIdentity(headers: PlainHeaders, peer: string | undefined, trustProxyHops = 0): CallerIdentity {
  const address = clientAddress(headers, peer, trustProxyHops);
  const addressKey = `addr:${addressBucket(address)}`;
  const fp = credentialFingerprint(headers);
  return {
    callerKey: fp === undefined ? addressKey : `cred:${fp}`,
    addressKey,
    address,
    hasCredentials: fp !== undefined,
  };
}
