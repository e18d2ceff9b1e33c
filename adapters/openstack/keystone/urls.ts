/**
 * Keystone paths, relative to the auth URL (which ends in `/v3`). No other file builds them.
 */

/** Token validation (`GET`, caller tokens) and issue (`POST`, the gateway's own credential). */
export const tokensURL = (): string => '/auth/tokens';
