/**
 * A subscription's start checks (docs/subscriptions.md, "The start"): each concerned backend's
 * answer about the subscriber's credential, through the access cache; the per-credential quota's
 * key made of the credentials that proved valid; how a refusing backend is named; and the
 * subscriber's credential per backend, kept for the subscription's life.
 */
import { createHash } from 'node:crypto';
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { CallerCredential } from '../../adapters/contract/call-options';
import { UnauthenticatedError } from '../../adapters/contract/errors';
import { tokenHash, type AccessCache } from './access';
import { SubscriptionLimitError } from './budget';
import type { OmissionView } from './view';
import type { GatewayContext } from '../../domain/context';
import type { BackendRegistry } from '../../domain/registry';
import type { EventSubscriber } from './fanout';

/** What the start's credential checks found, by backend id. */
export interface Checked {
  /** Backends that know the credential: the per-credential key. */
  valid: string[];
  /** Backends that refused it. */
  refused: Map<string, UnauthenticatedError>;
}

/**
 * Each backend's check of the credential the subscriber sent it (none sent: nothing to check).
 * @param admitCheck charges one check sent (a cache miss); its refusal is thrown
 * @throws SubscriptionLimitError when the address is out of checks for now
 */
export async function checkCredentials(
  backends: VolumeBackend[],
  credential: (backend: string) => CallerCredential,
  access: AccessCache,
  admitCheck: () => SubscriptionLimitError | undefined,
): Promise<Checked> {
  const out: Checked = { valid: [], refused: new Map() };
  const answers = backends.map((b) => {
    const c = credential(b.id);
    return c.token ? access.credential(b, c, admitCheck) : 'unknown';
  });
  const over = answers.find((a): a is SubscriptionLimitError => a instanceof SubscriptionLimitError);
  if (over) throw over;
  // Cached answers are values, checks in flight promises: one async step waits for either.
  const settled = await Promise.all(answers.map(async (a) => a));
  settled.forEach((a, i) => {
    const id = backends[i]!.id;
    if (a instanceof UnauthenticatedError) out.refused.set(id, a);
    else if (a === 'valid') out.valid.push(id);
  });
  return out;
}

/** The per-credential quota's key: the credentials that proved valid (backend and token hash), else the address. */
export function quotaKey(checked: Checked, credential: (backend: string) => CallerCredential, address: string): string {
  if (checked.valid.length === 0) return `addr:${address}`;
  const h = createHash('sha256');
  for (const id of [...checked.valid].sort()) h.update(`${id}\0${tokenHash(credential(id))}\0`);
  return `cred:${h.digest('base64url')}`;
}

/** A backend that refused the subscriber's credential, named as an HTTP list names it (FAILED, its error's code). */
export function refusedOmission(b: VolumeBackend, err: UnauthenticatedError): OmissionView {
  return {
    backend: b,
    reason: 'FAILED',
    code: err.code,
    message: `backend "${b.id}" refused the subscription's credential, so its changes are not reported: ${err.message}`,
  };
}

/**
 * The subscriber's credential per backend, without the context. A function of its own so that the
 * closure's scope holds the map only: a closure in `#subscribeEvents` would share its scope with
 * `ctx` and keep the whole start context (loaders, limits, signals) alive for the subscription's life.
 */
export function credentialsOf(registry: BackendRegistry, ctx: GatewayContext): EventSubscriber['credential'] {
  const byBackend = new Map<string, CallerCredential>();
  // A loop, not a callback: a callback naming `ctx` would put it in the scope the result closes over.
  for (const b of registry.all) byBackend.set(b.id, ctx.call(b.id).credential);
  const none: CallerCredential = {};
  return (backend) => byBackend.get(backend) ?? none;
}
