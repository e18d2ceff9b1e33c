/** The global ids the use cases answer with and track operations under. */
import { encodeGlobalId } from '../adapters/contract/ids';
import type { Attachment, VolumeRef } from '../adapters/contract/model';

/**
 * `make(o)` once per object, remembered on the object itself while it lives: a backend may hand out
 * the same model objects on every read (the memory backend keeps them until they change), and each
 * id costs a JSON text and a base64 encoding, three per attachment of a list. Model objects are
 * never changed in place, so the result never goes stale.
 *
 * The result is a non-enumerable symbol-keyed property (invisible to JSON, spreads and equality),
 * not a WeakMap entry: most objects of an unwatched backend's list are read once and dropped, and
 * a WeakMap entry per object cost that list about 7 % of its CPU (bench/RESULTS.md, issue 20).
 * An object that cannot take a property (frozen) gets `make(o)` on every call.
 */
export function memoized<T extends object, R>(make: (o: T) => R): (o: T) => R {
  const key = Symbol('memoized');
  return (o) => {
    let r = (o as { [key]?: R })[key];
    if (r !== undefined) return r;
    r = make(o);
    if (Object.isExtensible(o)) Object.defineProperty(o, key, { value: r });
    return r;
  };
}

export const volumeId = memoized((ref: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId }),
);

export const snapshotId = (s: { backend: string; scope: string; nativeId: string }): string =>
  encodeGlobalId({ kind: 'Snapshot', backend: s.backend, scope: s.scope, nativeId: s.nativeId });

export const attachmentId = memoized((a: Attachment): string =>
  encodeGlobalId({
    kind: 'Attachment',
    backend: a.volume.backend,
    scope: a.volume.namespace,
    nativeId: a.volume.nativeId,
    subId: a.consumerId,
  }),
);

/**
 * A consumer's id: its hold on one volume (backend, volume and the consumer's native id), so a client
 * cache keys each consumer object apart from its attachment's and never merges two volumes' consumers.
 */
export const consumerId = memoized((a: Attachment): string =>
  encodeGlobalId({
    kind: 'Consumer',
    backend: a.volume.backend,
    scope: a.volume.namespace,
    nativeId: a.volume.nativeId,
    subId: a.consumerId,
  }),
);

export const operationId = (r: { backend: string; scope: string; id: string }): string =>
  encodeGlobalId({ kind: 'Operation', backend: r.backend, scope: r.scope, nativeId: r.id });
