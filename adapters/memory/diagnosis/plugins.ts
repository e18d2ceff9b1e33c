/**
 * CLAIM_ON_MISSING_PLUGIN: an attachment on a host whose storage plugin instance is `unhealthy` or
 * `missing` (it cannot unpublish the volume there), or an attached volume while the plugin needs a
 * controller and none is healthy; each past `graceMs` (a plugin restarting is not a problem). The
 * data hold no time of a plugin's health, so the age counts from when the doctor first saw it.
 */
import type { DiagnosisContext, Finding, PluginEvidence } from '../../contract/diagnosis';
import type { Attachment, Volume } from '../../contract/model';
import { claimIdle } from './claims';
import type { MemoryFacts } from './facts';
import { detach, manual } from './remedies';
import type { MemoryThresholds } from './thresholds';

function evidence(
  facts: MemoryFacts,
  host: string | null,
  healthy: boolean | null,
  a: Attachment | null,
): PluginEvidence {
  const p = facts.plugin;
  return {
    __typename: 'VolumePluginEvidence',
    pluginId: p.id,
    nodeId: host,
    nodePluginHealthy: healthy,
    controllerRequired: p.controllerRequired,
    controllersHealthy: p.controllersHealthy,
    controllersExpected: p.controllersExpected,
    nodesHealthy: p.nodesHealthy,
    nodesExpected: p.nodesExpected,
    attachment: a,
  };
}

/** Adds the volume's claims that a missing or unhealthy plugin keeps to `out`. */
export function missingPlugins(
  v: Volume,
  facts: MemoryFacts,
  ctx: DiagnosisContext,
  t: MemoryThresholds,
  out: Finding[],
): void {
  for (const a of v.attachments) {
    const host = a.consumer.nodeId;
    const plugin = host ? (facts.hosts?.get(host)?.plugin ?? 'healthy') : 'healthy';
    // A host the backend does not know is gone: ATTACHMENT_DRIFT says so.
    if (!host || plugin === 'healthy' || !facts.hosts?.has(host)) continue;
    if (ctx.now - ctx.firstSeen(v.ref, `plugin:${host}`) < t.graceMs) continue;
    // Blocking once the volume should leave the host: a detach under way, or its workload done.
    const blocking = a.state === 'DETACHING' || claimIdle(a, facts);
    out.push({
      kind: 'CLAIM_ON_MISSING_PLUGIN',
      severity: blocking ? 'CRITICAL' : 'WARNING',
      volume: v.ref,
      subject: `node:${host}`,
      startedAt: null,
      summary: `Host ${host}'s storage plugin is ${plugin}, so attachment ${a.consumerId} cannot be released there.`,
      evidence: evidence(facts, host, plugin === 'missing' ? null : false, a),
      remedies: [
        manual({
          action: 'RESTART_NODE_PLUGIN',
          does: `Start the storage plugin on host ${host} again (mark it healthy in the data file), so it can unpublish the volume.`,
          risk: 'Nothing: the attachment stays until it is detached.',
          who: 'OPERATOR',
        }),
        detach(v.ref, a.consumerId, {
          action: 'DETACH_WITHOUT_PLUGIN',
          does: `Detaches the volume from host ${host} in the backend's records.`,
          risk: `The plugin cannot unpublish it on ${host}: the device may stay in use there while another host attaches it.`,
          who: 'VOLUME_WRITER',
        }),
      ],
    });
  }
  const p = facts.plugin;
  if (v.attachments.length > 0 && p.controllerRequired && p.controllersHealthy === 0) {
    if (ctx.now - ctx.firstSeen(v.ref, 'controller') >= t.graceMs)
      out.push({
        kind: 'CLAIM_ON_MISSING_PLUGIN',
        severity: 'CRITICAL',
        volume: v.ref,
        subject: 'controller',
        startedAt: null,
        summary: `Storage plugin ${p.id} has no healthy controller, so the volume's ${v.attachments.length} attachment(s) cannot be published or released.`,
        evidence: evidence(facts, null, null, null),
        remedies: [
          manual({
            action: 'RESTART_CONTROLLER',
            does: `Start a controller of storage plugin ${p.id} (controllersHealthy in the data file).`,
            risk: 'Nothing.',
            who: 'OPERATOR',
          }),
        ],
      });
  }
}
