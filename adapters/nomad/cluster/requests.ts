/**
 * What the adapter asks Nomad about the cluster rather than its storage: the Raft leader (the
 * health probe) and whether Nomad knows a caller's token (subscriber access, `access.ts`).
 */
import type { CallOptions } from '../../contract/call-options';
import { GatewayError, NotFoundError, UnauthenticatedError } from '../../contract/errors';
import type { NomadClient, NomadResult } from '../client';
import * as urls from './urls';

/** Address of the Raft leader; needs no ACL, so it serves as the health probe. */
export function leader(c: NomadClient, o: CallOptions): Promise<NomadResult<string>> {
  return c.call(
    { method: 'GET', path: urls.leaderURL(), endpoint: 'GET /v1/status/leader', action: 'probing the leader' },
    o,
  );
}

/**
 * Whether Nomad knows the credential's token (`GET /v1/acl/token/self`). The CSI endpoints answer
 * an unknown token with the same `403 Permission denied` as a lacking policy; this one answers
 * `ACL token not found` instead. ACLs disabled (400) means every token is as good as any.
 */
export async function tokenKnown(c: NomadClient, o: CallOptions): Promise<boolean> {
  try {
    await c.call(
      { method: 'GET', path: urls.aclTokenSelfURL(), endpoint: 'GET /v1/acl/token/self', action: 'checking the token' },
      o,
    );
    return true;
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof UnauthenticatedError) return false;
    if (err instanceof GatewayError && err.httpStatus === 400) return true;
    throw err;
  }
}
