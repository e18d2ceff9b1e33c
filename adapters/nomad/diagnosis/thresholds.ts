/**
 * The Nomad checks' thresholds and how their defaults are derived from Nomad's own timings
 * (hashicorp/nomad at the commit docs/upstream.md names). Each is a backend setting
 * (settings.ts, `diagnosis`), so a cluster tuned differently can say so.
 */

/**
 * How often Nomad's leader runs the claim GC: `csi_volume_claim_gc_interval`, 5 minutes by default
 * (nomad/config.go `DefaultConfig` `CSIVolumeClaimGCInterval`; nomad/leader.go `schedulePeriodic`).
 */
export const NOMAD_CLAIM_GC_INTERVAL_MS = 5 * 60_000;

/**
 * How long a volume must be unchanged before the claim GC looks at it: `csi_volume_claim_gc_threshold`,
 * 5 minutes by default (nomad/config.go `CSIVolumeClaimGCThreshold`; nomad/core_sched.go
 * `csiVolumeClaimGC` skips volumes whose ModifyTime is newer).
 */
export const NOMAD_CLAIM_GC_THRESHOLD_MS = 5 * 60_000;

/** Slack for the leader's eval queue and the unpublish RPCs the GC sends. */
export const CLAIM_GC_MARGIN_MS = 60_000;

/**
 * How often a Nomad client fingerprints a CSI plugin instance, which is when an instance's health
 * changes in Nomad's view (client/pluginmanager/csimanager/instance.go `managerFingerprintInterval`).
 */
export const NOMAD_PLUGIN_FINGERPRINT_MS = 30_000;

/**
 * How long a plugin task has to become healthy after it starts, `csi_plugin { health_timeout }`,
 * 30 seconds by default (client/allocrunner/taskrunner/plugin_supervisor_hook.go).
 */
export const NOMAD_PLUGIN_HEALTH_TIMEOUT_MS = 30_000;

/** The Nomad checks' thresholds, in ms. */
export interface NomadDiagnosisThresholds {
  /**
   * How long a claim may outlive its allocation (terminal or garbage-collected) before it is a
   * `STUCK_CLAIM`. Normally Nomad's volume watcher frees it within seconds; when that fails the
   * claim GC retries, at the latest one GC interval after the volume became old enough for it:
   * interval + threshold + margin.
   * @default 660000 (11 min: 5 min interval + 5 min threshold + 1 min margin)
   */
  stuckClaimMs: number;
  /**
   * How long a plugin may be unhealthy where a claim or volume needs it before it is a
   * `CLAIM_ON_MISSING_PLUGIN`. A plugin that restarts (a job update, a crash) is healthy again
   * within its health timeout plus one fingerprint; twice that covers one restart without an alarm.
   * @default 120000 (2 min: 2 × (30 s health_timeout + 30 s fingerprint interval))
   */
  missingPluginMs: number;
}

export const DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS: NomadDiagnosisThresholds = {
  stuckClaimMs: NOMAD_CLAIM_GC_INTERVAL_MS + NOMAD_CLAIM_GC_THRESHOLD_MS + CLAIM_GC_MARGIN_MS,
  missingPluginMs: 2 * (NOMAD_PLUGIN_HEALTH_TIMEOUT_MS + NOMAD_PLUGIN_FINGERPRINT_MS),
};
