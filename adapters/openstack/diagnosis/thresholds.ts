/**
 * How long each Cinder transition may last before the doctor calls it stuck, with each default's
 * derivation from Cinder's and Nova's own timeouts (docs/openstack.md, "Volume doctor"). The
 * recorded transcripts come from a fake driver that finishes in milliseconds, so they are no
 * guide here. Copies take time in proportion to size: their thresholds are size-scaled.
 */

/** oslo.messaging's `rpc_response_timeout` default (oslo_messaging/rpc/client.py), seconds: how long Cinder and Nova wait for one RPC call. */
const RPC_RESPONSE_TIMEOUT_S = 60;

/** The doctor's OpenStack thresholds, ms. Meanings, defaults and derivations: {@link DIAGNOSIS_DEFAULTS}. */
export interface DiagnosisThresholds {
  creatingMs: number;
  attachingMs: number;
  detachingMs: number;
  extendingMs: number;
  deletingMs: number;
  copyBaseMs: number;
  copyPerGiBMs: number;
  /** How long Nova and Cinder may disagree about an attachment before it is drift. */
  driftGraceMs: number;
}

/** How many watcher polls the drift grace spans by default (a normal attach is seen by the two APIs at different moments). */
export const DRIFT_GRACE_POLLS = 2;

/**
 * The defaults, each derived from an upstream timeout (option, its file and default):
 *
 * - `creatingMs` 180 s: Nova waits `block_device_allocate_retries` (60) ×
 *   `block_device_allocate_retries_interval` (3 s) for a volume it created to become available
 *   (openstack/nova nova/conf/compute.py) and then gives up on it.
 * - `attachingMs` 180 s (also `reserved`): 3 × `rpc_response_timeout` (60 s): Cinder's
 *   `attachment_update` waits that long for cinder-volume's `initialize_connection`, then the host
 *   connects (os-brick, rescanning up to Nova's `[libvirt] num_volume_scan_tries` = 5 times,
 *   nova/conf/libvirt.py) and completes the attachment.
 * - `detachingMs` 220 s: libvirt's detach on the host, `[libvirt] device_detach_attempts` (8) ×
 *   `device_detach_timeout` (20 s) (nova/conf/libvirt.py), plus one `rpc_response_timeout` for
 *   Cinder's `terminate_connection` when the attachment is deleted.
 * - `extendingMs` 180 s: 3 × `rpc_response_timeout`: cinder-api → cinder-scheduler →
 *   cinder-volume's driver extend, and for an attached volume Nova's `volume-extended` event.
 * - `deletingMs` 180 s + `copyPerGiBMs` per GiB: 3 × `rpc_response_timeout`, plus the size-scaled
 *   part because the LVM driver zeroes the whole volume on delete by default (`volume_clear` =
 *   `zero`, `volume_clear_size` = 0: all of it; openstack/cinder cinder/volume/driver.py).
 * - `copyBaseMs` 300 s + `copyPerGiBMs` 30 s per GiB for `downloading`, `uploading`, `backing-up`,
 *   `restoring-backup`, `retyping`, `maintenance`: Cinder bounds data copies by no timeout, so the
 *   default is a throughput floor (30 s per GiB ≈ 34 MiB/s) after 5 × `rpc_response_timeout` for
 *   setting the copy up (scheduling, exports, Glance or the backup service answering).
 * - `driftGraceMs`: {@link DRIFT_GRACE_POLLS} × the watcher's `watchSlowMs` (10 s → 20 s): a normal
 *   attach or detach shows in Nova and Cinder at different moments, and the watcher's view may be
 *   one poll older than the doctor's Nova listing.
 */
export const DIAGNOSIS_DEFAULTS = {
  creatingMs: 60 * 3 * 1000,
  attachingMs: 3 * RPC_RESPONSE_TIMEOUT_S * 1000,
  detachingMs: (8 * 20 + RPC_RESPONSE_TIMEOUT_S) * 1000,
  extendingMs: 3 * RPC_RESPONSE_TIMEOUT_S * 1000,
  deletingMs: 3 * RPC_RESPONSE_TIMEOUT_S * 1000,
  copyBaseMs: 5 * RPC_RESPONSE_TIMEOUT_S * 1000,
  copyPerGiBMs: 30_000,
} as const;

/** How a transitional status's threshold is computed. */
type Rule = { fixed: keyof DiagnosisThresholds } | { base: keyof DiagnosisThresholds; perGiB: true };

/**
 * The Cinder statuses the doctor times, by wire word. Not here: `awaiting-transfer` (it waits for
 * its recipient by design), `reverting`, `managing`, `unmanaging` (not in the doctor's list; they
 * keep the watcher fast but are not judged), and `reserved` of a shelved-offloaded server's volume
 * (its normal state: the check asks Nova's listing).
 */
export const TIMED_STATUSES: Readonly<Record<string, Rule>> = {
  creating: { fixed: 'creatingMs' },
  reserved: { fixed: 'attachingMs' },
  attaching: { fixed: 'attachingMs' },
  detaching: { fixed: 'detachingMs' },
  extending: { fixed: 'extendingMs' },
  deleting: { base: 'deletingMs', perGiB: true },
  maintenance: { base: 'copyBaseMs', perGiB: true },
  'backing-up': { base: 'copyBaseMs', perGiB: true },
  'restoring-backup': { base: 'copyBaseMs', perGiB: true },
  downloading: { base: 'copyBaseMs', perGiB: true },
  uploading: { base: 'copyBaseMs', perGiB: true },
  retyping: { base: 'copyBaseMs', perGiB: true },
};

/** The threshold of `word` for a volume of `sizeGiB`, ms; null when the status is not timed. */
export function thresholdFor(word: string, sizeGiB: number, t: DiagnosisThresholds): number | null {
  const rule = TIMED_STATUSES[word];
  if (!rule) return null;
  return 'fixed' in rule ? t[rule.fixed] : t[rule.base] + t.copyPerGiBMs * Math.max(0, sizeGiB);
}

/** The thresholds with every one not given at its default; the drift grace from the watcher's slow interval. */
export function resolveThresholds(given: Partial<DiagnosisThresholds>, watchSlowMs: number): DiagnosisThresholds {
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  return { ...DIAGNOSIS_DEFAULTS, driftGraceMs: DRIFT_GRACE_POLLS * watchSlowMs, ...defined };
}
