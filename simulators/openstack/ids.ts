/**
 * Identifier formats of the three services: Keystone uses 32-hex ids (uuid4().hex) for projects,
 * users, roles, services and endpoints; Cinder and Nova use dashed uuid4; tokens are opaque
 * Fernet-looking strings; request ids are `req-<uuid>`.
 */
import { randomBytes, randomUUID } from 'node:crypto';

/** A dashed uuid4 (Cinder/Nova resource ids). */
export function uuid(): string {
  return randomUUID();
}

/** A Keystone-style id: uuid4 without dashes. */
export function hexId(): string {
  return randomUUID().replace(/-/g, '');
}

/** `req-<uuid>` as oslo's request-id middleware writes it. */
export function requestId(): string {
  return `req-${randomUUID()}`;
}

/**
 * An opaque token that looks like a Fernet token (`gAAAAAB…`, url-safe base64, ~180 chars);
 * it carries nothing: the simulator looks it up.
 */
export function fernetLikeToken(): string {
  return `gAAAAAB${randomBytes(133).toString('base64url')}`;
}

/** Keystone audit id: 16 random bytes, url-safe base64 without padding (22 chars). */
export function auditId(): string {
  return randomBytes(16).toString('base64url');
}

/** A short random password such as Nova's `adminPass`. */
export function password(): string {
  return randomBytes(9).toString('base64url').slice(0, 12);
}
