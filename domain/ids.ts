/** The global ids the use cases answer with and track operations under. */
import { encodeGlobalId } from '../adapters/contract/ids';
import type { Attachment, VolumeRef } from '../adapters/contract/model';

/**
 * `make(o)` once per object, remembered while the object lives: a backend may hand out the same
 * model objects on every read (the memory backend keeps them until they change), and each id costs
 * a JSON text and a base64 encoding, three per attachment of a list. Model objects are never
 * changed in place.
 */
export function memoized<T extends object, R>(make: (o: T) => R): (o: T) => R {
  const made = new WeakMap<T, R>();
  return (o) => {
    let r = made.get(o);
    if (r === undefined) made.set(o, (r = make(o)));
    return r;
  };
}

export const volumeId = memoized((ref: VolumeRef): string => encodeGlobalId({ kind: 'Volume', backend: ref.backend, scope: ref.namespace, nativeId: ref.nativeId }));

export const snapshotId = (s: { backend: string; scope: string; nativeId: string }): string => encodeGlobalId({ kind: 'Snapshot', backend: s.backend, scope: s.scope, nativeId: s.nativeId });

export const attachmentId = memoized((a: Attachment): string =>
  encodeGlobalId({ kind: 'Attachment', backend: a.volume.backend, scope: a.volume.namespace, nativeId: a.volume.nativeId, subId: a.consumerId }));

/**
 * A consumer's id: its hold on one volume (backend, volume and the consumer's native id), so a client
 * cache keys each consumer object apart from its attachment's and never merges two volumes' consumers.
 */
export const consumerId = memoized((a: Attachment): string =>
  encodeGlobalId({ kind: 'Consumer', backend: a.volume.backend, scope: a.volume.namespace, nativeId: a.volume.nativeId, subId: a.consumerId }));

export const operationId = (r: { backend: string; scope: string; id: string }): string => encodeGlobalId({ kind: 'Operation', backend: r.backend, scope: r.scope, nativeId: r.id });
