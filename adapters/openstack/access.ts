/**
 * Who may see what the watcher saw: a subscriber's Keystone token, validated through the same
 * cached caller-session path as every call (per token hash), decides by its project and roles.
 * The watcher reads as an admin when it can, so admin-only fields are removed for everyone else.
 */
import type { CallOptions, CallerCredential } from '../contract/call-options';
import type { NamespaceName } from '../contract/capabilities';
import type { Attachment, Volume } from '../contract/model';
import type { AccessGrant } from '../contract/watch';
import type { OpenStackClient } from './client';
import { isAdminSession } from './keystone';
import { hostConsumer, isCinderDetails, isHostConsumer } from './model';

/**
 * May the token in `o` read volumes of project `scope`? Its own project: yes; any project when it
 * carries the `admin` role (admin = true, so admin-only fields stay); otherwise no. Validated
 * afresh (not from the minute-long validation cache), so a revoked token is refused at the next
 * check; the grant is valid until the token expires (the gateway's cache caps it further).
 * @throws UnauthenticatedError for a missing, invalid or expired token (Keystone says so)
 */
export async function checkAccess(client: OpenStackClient, scope: string, o: CallOptions): Promise<AccessGrant> {
  const s = await client.keystone.callerSession(o.credential.token, true);
  const admin = isAdminSession(s);
  return { allowed: admin || s.projectId === scope, admin, validUntil: s.expiresAt };
}

/**
 * Is the token in `o` one Keystone accepts? Validated afresh, as `checkAccess` does.
 * @throws UnauthenticatedError for an invalid or expired token
 */
export async function checkCredential(client: OpenStackClient, o: CallOptions): Promise<void> {
  if (!o.credential.token) return;
  await client.keystone.callerSession(o.credential.token, true);
}

/** The caller's project and its name, from the (cached) validation of the caller's token. */
export async function callerNamespace(client: OpenStackClient, o: CallOptions): Promise<NamespaceName | null> {
  if (!o.credential.token) return null;
  const session = await client.session(o);
  return { id: session.projectId, name: session.projectName };
}

const hostNamed = (a: Attachment): boolean => isHostConsumer(a.consumer) && a.consumer.hostName !== null;
const hideHost = (a: Attachment): Attachment => (hostNamed(a) ? { ...a, consumer: hostConsumer(null) } : a);

/**
 * `v` as a non-admin sees it: without `migration_status` (Cinder omits it for non-admins) and
 * without attachments' host names (null unless admin or service). An admin's grant sees it whole.
 * Never changes `v` (the watcher's view is shared).
 */
export function redact(v: Volume, grant: AccessGrant): Volume {
  if (grant.admin) return v;
  const d = v.details;
  const details = isCinderDetails(d) && d.migrationStatus !== null ? { ...d, migrationStatus: null } : d;
  const attachments = v.attachments.some(hostNamed) ? v.attachments.map(hideHost) : v.attachments;
  return details === d && attachments === v.attachments ? v : { ...v, details, attachments };
}

/** The gateway's own credential (its service session's token); null when none is configured. */
export async function serviceCredential(client: OpenStackClient): Promise<CallerCredential | null> {
  if (!client.keystone.hasServiceAuth) return null;
  const s = await client.keystone.serviceSession();
  return { token: s.token };
}
