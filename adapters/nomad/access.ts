/**
 * Who may see what the watcher saw: a subscriber's Nomad token, asked of Nomad itself. Nomad's
 * ACL is per namespace and no volume field depends on the caller, so a grant is all or nothing
 * and nothing is redacted.
 */
import type { CallOptions } from '../contract/call-options';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../contract/errors';
import type { Volume, VolumeRef } from '../contract/model';
import type { AccessGrant, ViewReadProof } from '../contract/watch';
import { tokenKnown } from './cluster/requests';
import type { NomadContext } from './context';
import { readVolume } from './volumes/requests';

/**
 * Reads the change's volume in `scope` with the subscriber's token: csi-read-volume is granted
 * per namespace, so a 200 or a 404 proves the namespace and a 403 denies it. The CSI endpoints
 * answer an unknown token like a lacking policy, so a 403 is followed by `GET
 * /v1/acl/token/self`, which tells them apart: an unknown token throws UnauthenticatedError.
 * No token at all, where the anonymous policy does not cover the namespace, is not allowed.
 */
export async function checkAccess(
  ctx: NomadContext,
  scope: string,
  volume: VolumeRef,
  o: CallOptions,
): Promise<AccessGrant> {
  const deny: AccessGrant = { allowed: false, admin: false };
  try {
    await readVolume(ctx.client, volume.nativeId, scope, o);
  } catch (err) {
    if (err instanceof NotFoundError) return { allowed: true, admin: false };
    if (!o.credential.token && (err instanceof UnauthenticatedError || err instanceof ForbiddenError)) return deny;
    if (err instanceof ForbiddenError) {
      if (await tokenKnown(ctx.client, o)) return deny;
      throw new UnauthenticatedError(`the Nomad token is not known to backend "${ctx.backend}" (revoked or expired)`, {
        backend: ctx.backend,
        httpStatus: 403,
      });
    }
    throw err;
  }
  return { allowed: true, admin: false };
}

/**
 * Is the token in `o` one Nomad knows? No token passes (the anonymous policy decides per call).
 * @throws UnauthenticatedError for an invalid, revoked or expired token
 */
export async function checkCredential(ctx: NomadContext, o: CallOptions): Promise<void> {
  if (!o.credential.token) return;
  if (!(await tokenKnown(ctx.client, o)))
    throw new UnauthenticatedError(
      `the Nomad token is not known to backend "${ctx.backend}" (invalid, revoked or expired)`,
      { backend: ctx.backend, httpStatus: 403 },
    );
}

/** Nomad has no admin-only volume fields: what the namespace's reader may read is the whole volume. */
export function redact(volume: Volume, _grant: AccessGrant): Volume {
  return volume;
}

/** The gateway's own credential (the configured service token); null when none is configured. */
export async function serviceCredential(token: string | undefined): Promise<{ token: string } | null> {
  return token ? { token } : null;
}

/**
 * Watch-fed reads: the caller's token reads the first volume itself, and its answer, found or not
 * found, proves csi-read-volume in the namespace (Nomad's ACL granularity, as {@link checkAccess});
 * an error refuses the namespace. The watcher's view answers the other volumes.
 */
export const NAMESPACE_READ_PROOF: ViewReadProof = {
  async prove(refs, read) {
    const first = await read(refs.slice(0, 1));
    const answer = first[0];
    return { read: first, refused: answer instanceof Error ? answer : null };
  },
};
