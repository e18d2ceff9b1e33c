/**
 * The hosts' own record of what they have attached (`HostData.volumes`), kept in step with the
 * volumes' attachments as the backend changes them: an attach adds the volume to its host's list
 * when it completes, a detach removes it when it ends. Only a data file (or an operator editing
 * it) makes the two records disagree, as a compute service and a volume service can.
 */
import type { HostData, VolumeData } from './shape';

/** The hosts holding a volume by its attachments: an attachment being made is not held yet. */
export function hostsHolding(d: VolumeData | undefined): Set<string> {
  return new Set((d?.attachments ?? []).filter((a) => a.state !== 'ATTACHING').map((a) => a.host));
}

/**
 * The hosts' list after the volume `key` moved in and out of the lists of the hosts that started or
 * stopped holding it between `before` and `after`; null when no list changes. Hosts that do not
 * report their volumes keep none. Pure: the hosts given are not changed.
 */
export function followAttachments(
  hosts: readonly HostData[] | undefined,
  key: string,
  before: VolumeData | undefined,
  after: VolumeData | undefined,
): HostData[] | null {
  if (!hosts || hosts.length === 0) return null;
  const was = hostsHolding(before);
  const is = hostsHolding(after);
  let changed = false;
  const next = hosts.map((h) => {
    if (!h.volumes) return h;
    const listed = h.volumes.includes(key);
    if (is.has(h.name) && !was.has(h.name) && !listed) {
      changed = true;
      return { ...h, volumes: [...h.volumes, key] };
    }
    if (was.has(h.name) && !is.has(h.name) && listed) {
      changed = true;
      return { ...h, volumes: h.volumes.filter((k) => k !== key) };
    }
    return h;
  });
  return changed ? next : null;
}
