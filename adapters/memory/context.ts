/** What the memory backend's operation modules share: its data, access rules, faults and delayed changes. */
import { randomUUID } from 'node:crypto';
import type { PendingChange } from '../contract/completion';
import type { VolumeRef } from '../contract/model';
import type { MemoryAccess } from './access';
import type { HeldStatus, VolumeData } from './data/shape';
import type { Faults } from './faults';
import type { DelayedChanges } from './completion/changes';
import { volumeKey, type MemoryStore } from './data/store';
import { notFound } from './errors';

export interface MemoryContext {
  backend: string;
  store: MemoryStore;
  access: MemoryAccess;
  faults: Faults;
  changes: DelayedChanges;
}

export const now = (): string => new Date().toISOString();

/** A fresh id with a readable prefix (`vol-3f2a9c1b`). */
export const newId = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The volume's data. @throws NotFoundError when it does not exist */
export function existing(ctx: MemoryContext, ref: VolumeRef): VolumeData {
  const d = ctx.store.volumeData(ref.namespace, ref.nativeId);
  if (!d)
    throw notFound(ctx.backend, `volume ${ref.namespace}/${ref.nativeId} does not exist on backend "${ctx.backend}"`);
  return d;
}

/**
 * The status that keeps a new change off the volume: ERROR, or a transition a running change holds.
 * A transition with no change running (left in a data file, or by a change lost in a reload) holds
 * nothing: a retry of its kind may start (a detach of a volume stuck `DETACHING`), which is what the
 * doctor's STUCK_TRANSITION remedies send. undefined: none.
 */
export function blockingStatus(ctx: MemoryContext, d: VolumeData): HeldStatus | undefined {
  if (!d.status || d.status === 'ERROR') return d.status;
  return ctx.changes.runningOn(volumeKey(d.namespace, d.id)) ? d.status : undefined;
}

/**
 * A change in two steps: `begin` now with the volume in status `during`, `end` after the delay (or
 * both at once with no delay). If the volume left `during` meanwhile (deleted, data reset), the
 * change fails saying so and `end` is not applied.
 */
export function transition(
  ctx: MemoryContext,
  ref: VolumeRef,
  during: HeldStatus,
  begin: (current: VolumeData | undefined) => VolumeData,
  end: (current: VolumeData) => VolumeData | null,
): PendingChange | null {
  const { namespace, nativeId } = ref;
  if (ctx.changes.delayMs <= 0) {
    // Done at once: the status the volume held (a stale transition this retries) ends with it.
    ctx.store.change(namespace, nativeId, (cur) => {
      const { status: _held, ...rest } = begin(cur);
      return end({ ...rest, updatedAt: now() });
    });
    return null;
  }
  ctx.store.change(namespace, nativeId, (cur) => ({ ...begin(cur), status: during, updatedAt: now() }));
  return ctx.changes.start(
    () => {
      let gone: string | undefined;
      ctx.store.change(namespace, nativeId, (cur) => {
        if (!cur || cur.status !== during) {
          gone = `volume ${namespace}/${nativeId} is no longer ${during.toLowerCase()} (deleted or the data were reset)`;
          return undefined;
        }
        const { status: _held, ...rest } = cur;
        return end({ ...rest, updatedAt: now() });
      });
      return gone;
    },
    volumeKey(namespace, nativeId),
  );
}
