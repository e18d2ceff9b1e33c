/**
 * What a volumeChanged/attachmentChanged subscription covers (docs/subscriptions.md, "Events"):
 * the backends whose changes it may want, and those among them its SUBSCRIBED names in
 * `omittedBackends`, each with the reason it cannot cover them.
 */
import { lacksCredential, type VolumeBackend } from '../../adapters/contract/backend';
import { ErrorCode, UnauthenticatedError } from '../../adapters/contract/errors';
import type { BackendRegistry } from '../../domain/registry';
import type { AccessCache } from './access';
import type { EventSubscriber } from './fanout';
import type { Feed } from './feed';
import type { Interest } from './spec';
import { refusedOmission } from './start-checks';
import type { OmissionView } from './view';

/** What coverage reads of a subscriber: its credential per backend, and the backends that refused it. */
export interface CoveredSubscriber {
  credential: EventSubscriber['credential'];
  readonly dropped: ReadonlyMap<string, UnauthenticatedError>;
}

/** The backends whose changes a subscription may want. */
export function concernedBackends(registry: BackendRegistry, i: Interest): VolumeBackend[] {
  return registry.all.filter((b) =>
    i.field === 'volumeChanged' || i.field === 'volumeProblemChanged'
      ? !i.filter.backends || i.filter.backends.has(b.id)
      : i.field === 'attachmentChanged' && (i.target.kind !== 'volume' || i.target.backend === b.id),
  );
}

/**
 * Backends whose watcher holds one scope only (`onlyScope`) that the subscriber's own credential
 * may not read, with that scope: the subscriber's changes happen where the watcher does not look.
 * One access check each, cached like the events' checks.
 */
export async function narrowWatchers(
  feed: Feed,
  access: AccessCache,
  sub: CoveredSubscriber,
  concerned: VolumeBackend[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    concerned.map(async (b) => {
      const only = feed.watcher(b.id)?.onlyScope?.() ?? null;
      const credential = sub.credential(b.id);
      if (only === null || !credential.token || sub.dropped.has(b.id)) return;
      const a = await access.get(b, only, { backend: b.id, namespace: only, nativeId: '' }, credential);
      if (!(a instanceof UnauthenticatedError) && !a.allowed) out.set(b.id, only);
    }),
  );
  return out;
}

/**
 * Backends the subscription cannot cover: no credential where one is required, a credential the
 * backend refused, no watcher, a watcher that watches a scope the subscriber's credential does
 * not read (`narrow`), a failing (DEGRADED) watcher, or one still without a first view
 * (`viewless`: its changes come once it has one).
 */
export function omissions(
  feed: Feed,
  registry: BackendRegistry,
  sub: CoveredSubscriber,
  concerned: VolumeBackend[],
  viewless: string[],
  narrow: Map<string, string>,
): OmissionView[] {
  const out: OmissionView[] = [];
  for (const b of concerned) {
    const why = feed.unavailable(b.id);
    const refused = sub.dropped.get(b.id);
    const watcher = feed.watcher(b.id)?.status();
    if (lacksCredential(b, sub.credential(b.id))) {
      out.push({
        backend: b,
        reason: 'NO_CREDENTIAL',
        code: null,
        message: `backend "${b.id}" needs a credential (${registry.credentialHeader(b)} in connection_init) and the subscription carried none for it`,
      });
    } else if (refused) {
      out.push(refusedOmission(b, refused));
    } else if (why !== undefined) {
      out.push({
        backend: b,
        reason: 'FAILED',
        code: 'UNSUPPORTED_BY_BACKEND',
        message: `no live changes from backend "${b.id}": ${why}`,
      });
    } else if (narrow.has(b.id)) {
      out.push({
        backend: b,
        reason: 'FAILED',
        code: 'UNSUPPORTED_BY_BACKEND',
        message: `backend "${b.id}"'s watcher sees project ${narrow.get(b.id)} only (the gateway's service user is not an admin there): changes in the projects this subscription's credential reads are not reported`,
      });
    } else if (watcher?.state === 'DEGRADED') {
      out.push({
        backend: b,
        reason: 'DEGRADED',
        code: ErrorCode.BackendUnavailable,
        message: `backend "${b.id}"'s watcher is failing${watcher.message ? ` (${watcher.message})` : ''}: its changes come late or not at all until it recovers`,
      });
    } else if (viewless.includes(b.id)) {
      out.push({
        backend: b,
        reason: 'FAILED',
        code: 'BACKEND_UNAVAILABLE',
        message: `backend "${b.id}"'s watcher has not read its first view yet: changes before it has are not reported`,
      });
    }
  }
  return out;
}
