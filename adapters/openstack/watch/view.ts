/**
 * The OpenStack watcher's view, as pure functions: which volumes are in motion (they make polling
 * fast), how Nova's attachment lists add what Cinder does not list, and how two views become
 * deltas. No I/O here; `read.ts` reads, `index.ts` schedules.
 */
import type { Attachment, Volume } from '../../contract/model';
import { isCinderDetails, isServerConsumer, type CinderVolumeStatus } from '../model';
import { toServerAttachment, type NovaVolumeAttachment } from '../nova/results';

/**
 * Cinder statuses that end by themselves soon (a running create, attach, detach, delete, extend,
 * transfer of data …): while any watched volume is in one, the watcher polls fast. `RESERVED` is
 * here because Nova's attach passes through it; `AWAITING_TRANSFER` and `MAINTENANCE` are not
 * (they wait for a person).
 */
export const TRANSITIONAL_STATUSES: ReadonlySet<CinderVolumeStatus> = new Set<CinderVolumeStatus>([
  'CREATING',
  'MANAGING',
  'RESERVED',
  'ATTACHING',
  'DETACHING',
  'DELETING',
  'EXTENDING',
  'DOWNLOADING',
  'UPLOADING',
  'BACKING_UP',
  'RESTORING_BACKUP',
  'RETYPING',
  'REVERTING',
]);

/** Migration phases that move on by themselves. */
const MOVING_MIGRATIONS: ReadonlySet<string> = new Set(['starting', 'migrating', 'completing']);

/** Whether `v` is in the middle of a change that will end without anyone acting (so: poll fast). */
export function inMotion(v: Volume): boolean {
  // Unified statuses cover the words the typed table calls OTHER (unmanaging …) too.
  if (
    v.status === 'CREATING' ||
    v.status === 'DELETING' ||
    v.status === 'ATTACHING' ||
    v.status === 'DETACHING' ||
    v.status === 'EXTENDING' ||
    v.status === 'RESERVED'
  )
    return true;
  const d = v.details;
  if (isCinderDetails(d)) {
    if (TRANSITIONAL_STATUSES.has(d.cinderStatus)) return true;
    if (d.migrationStatus !== null && MOVING_MIGRATIONS.has(d.migrationStatus)) return true;
  }
  return v.attachments.some((a) => a.state === 'ATTACHING' || a.state === 'DETACHING');
}

/**
 * What `v`'s motion is, as a key that changes with each new transition (Cinder's status, a
 * migration's phase, which attachments are attaching or detaching); null when it is not in motion.
 * A volume that stays in one transitional status keeps its key, however often it is read.
 */
export function motionOf(v: Volume): string | null {
  if (!inMotion(v)) return null;
  const d = v.details;
  const cinder = isCinderDetails(d) ? [d.cinderStatus, d.migrationStatus] : [];
  const moving = v.attachments
    .flatMap((a) => (a.state === 'ATTACHING' || a.state === 'DETACHING' ? [`${a.consumerId}:${a.state}`] : []))
    .sort();
  return JSON.stringify([v.status, ...cinder, ...moving]);
}

const serverOf = (a: Attachment): string | null =>
  isServerConsumer(a.consumer) ? a.consumer.serverId.toLowerCase() : null;

/** Servers Cinder lists `v` attached to (lower-case). */
export const attachedServers = (v: Volume | undefined): Set<string> =>
  new Set((v?.attachments ?? []).flatMap((a) => serverOf(a) ?? []));

/** Servers whose attachment to a volume appeared or went away between two Cinder views. */
export function serversChanged(before: Volume | undefined, after: Volume | undefined): string[] {
  const b = attachedServers(before);
  const a = attachedServers(after);
  return [...new Set([...b, ...a])].filter((s) => b.has(s) !== a.has(s));
}

/**
 * `v` (Cinder's view) plus the attachments Nova lists for it that Cinder does not (`nova`: the
 * entry naming `v` of each server read): one still attaching (volume `reserved`/`attaching`), one
 * detaching, or one the two services disagree on (ERROR with the reason, as
 * `attachments/servers.ts` reports it). Attachments Cinder lists stay exactly as Cinder shows them, so the view does not depend on
 * which servers were read.
 */
export function withNovaAttachments(v: Volume, nova: ReadonlyMap<string, NovaVolumeAttachment> | undefined): Volume {
  if (!nova || nova.size === 0) return v;
  const cinder = attachedServers(v);
  const extra = [...nova]
    .filter(([server]) => !cinder.has(server))
    .map(([, a]) => toServerAttachment(v.ref.backend, v.ref.namespace, a, v));
  return extra.length === 0 ? v : { ...v, attachments: [...v.attachments, ...extra] };
}

/** Nova's lists turned around: by lower-case volume id, each server's entry for it. */
export function byVolume(
  lists: ReadonlyMap<string, readonly NovaVolumeAttachment[]>,
): Map<string, Map<string, NovaVolumeAttachment>> {
  const out = new Map<string, Map<string, NovaVolumeAttachment>>();
  for (const [server, list] of lists) {
    for (const a of list) {
      const id = a.volumeId.toLowerCase();
      let m = out.get(id);
      if (!m) out.set(id, (m = new Map<string, NovaVolumeAttachment>()));
      m.set(server, a);
    }
  }
  return out;
}

/** Whether a server's Nova list says more than Cinder does about any of `volumes` (keep reading it). */
export function novaSaysMore(
  server: string,
  list: readonly NovaVolumeAttachment[],
  volumes: ReadonlyMap<string, Volume>,
): boolean {
  return list.some((a) => {
    const v = volumes.get(a.volumeId.toLowerCase());
    return !v || !attachedServers(v).has(server);
  });
}
