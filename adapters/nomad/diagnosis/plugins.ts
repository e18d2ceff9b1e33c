/**
 * `CLAIM_ON_MISSING_PLUGIN`: a released claim whose node plugin is not healthy, so Nomad cannot
 * unpublish it on the node (hashicorp/nomad client/csi_endpoint.go `NodeDetachVolume`; the server's
 * nomad/csi_endpoint.go `nodeUnpublishVolumeImpl` fails "could not detach from node"), or a volume
 * that needs a controller while none is healthy (no controller publish or unpublish:
 * `controllerUnpublishVolume`; the volume is not schedulable, `CSIVolume.WriteSchedulable`).
 *
 * A claim of a running or pending allocation is not checked: nothing needs its plugin until the
 * allocation stops. A lost allocation's claim is not either: its node is down, and Nomad skips the
 * node unpublish of a down or garbage-collected node (`nodeUnpublishVolume`).
 */
import type { DiagnosisContext, Finding, PluginEvidence } from '../../contract/diagnosis';
import type { HealthCount, Volume } from '../../contract/model';
import type { NomadVolumeDetails } from '../model';
import type { NomadDiagnosisFacts, PluginFacts } from './facts';
import { at, blocksOtherClaims, describeAllocation, type ReleasedClaim } from './released';
import { forceDeregister, restoreController, restoreNodePlugin } from './remedies';
import type { NomadDiagnosisThresholds } from './thresholds';

/** A node plugin instance where a claim needs it, when it is not healthy. */
interface NodePluginGap {
  /** False: listed unhealthy; null: the plugin does not list the node (or Nomad has no such plugin). */
  healthy: false | null;
  /** When the instance became unhealthy, by its client's clock; null when unknown. */
  since: string | null;
  pluginAllocationId: string | null;
}

/** The plugin's counts: this pass's listing, else the volume's own (copied in when it was read). */
function counts(
  d: NomadVolumeDetails,
  pf: PluginFacts | undefined,
  known: boolean,
): { c: HealthCount; n: HealthCount } {
  if (pf) return { c: pf.controllers, n: pf.nodes };
  const zero = { healthy: 0, expected: 0 };
  return known ? { c: d.controllers ?? zero, n: d.nodes ?? zero } : { c: zero, n: zero };
}

/**
 * The node plugin's state where a claim needs it; null when healthy or not known to be unhealthy.
 * Without facts (before the first read) only a plugin with no healthy node instance counts.
 */
function nodePluginGap(
  d: NomadVolumeDetails,
  facts: NomadDiagnosisFacts | null,
  nodeId: string | null,
): NodePluginGap | null {
  const none = (n: HealthCount | null): NodePluginGap | null =>
    n !== null && n.healthy === 0
      ? { healthy: n.expected > 0 ? false : null, since: null, pluginAllocationId: null }
      : null;
  if (facts === null) return none(d.nodes);
  const pf = d.pluginId === null ? undefined : facts.plugins.get(d.pluginId);
  if (!pf) return { healthy: null, since: null, pluginAllocationId: null };
  if (nodeId === null || pf.nodeInstances === null) return none(pf.nodes);
  const at = pf.nodeInstances.get(nodeId);
  if (!at) return { healthy: null, since: null, pluginAllocationId: null };
  return at.healthy ? null : { healthy: false, since: at.since, pluginAllocationId: at.allocationId };
}

/** Whether no controller is healthy for a volume that needs one; with when that began, if Nomad says. */
function controllerGap(d: NomadVolumeDetails, facts: NomadDiagnosisFacts | null): { since: string | null } | null {
  if (d.controllerRequired !== true) return null;
  if (facts === null) return d.controllers !== null && d.controllers.healthy === 0 ? { since: null } : null;
  const pf = d.pluginId === null ? undefined : facts.plugins.get(d.pluginId);
  if (!pf) return { since: null };
  return pf.controllers.healthy === 0 ? { since: pf.controllersDownSince } : null;
}

/** `iso` in ms, or `fallback` when Nomad gave no time. */
const timeOr = (iso: string | null, fallback: number): number => {
  const ms = iso === null ? NaN : Date.parse(iso);
  return Number.isNaN(ms) ? fallback : ms;
};

function evidence(
  d: NomadVolumeDetails,
  facts: NomadDiagnosisFacts | null,
  o: Pick<PluginEvidence, 'nodeId' | 'nodePluginHealthy' | 'attachment'>,
): PluginEvidence {
  const pf = d.pluginId === null ? undefined : facts?.plugins.get(d.pluginId);
  const { c, n } = counts(d, pf, facts === null);
  return {
    __typename: 'VolumePluginEvidence',
    pluginId: d.pluginId,
    ...o,
    controllerRequired: d.controllerRequired === true,
    controllersHealthy: c.healthy,
    controllersExpected: c.expected,
    nodesHealthy: n.healthy,
    nodesExpected: n.expected,
  };
}

/** The plugin findings of one volume. */
export function pluginFindings(
  v: Volume,
  d: NomadVolumeDetails,
  released: readonly ReleasedClaim[],
  facts: NomadDiagnosisFacts | null,
  ctx: DiagnosisContext,
  t: NomadDiagnosisThresholds,
): Finding[] {
  const out: Finding[] = [];
  const pluginId = d.pluginId ?? '(none)';
  const allReleased = released.length === v.attachments.length;
  for (const c of released) {
    if (c.allocation.clientStatus === 'lost') continue;
    const nodeId = c.allocation.nodeId;
    const gap = nodePluginGap(d, facts, nodeId);
    if (gap === null) continue;
    const seen = ctx.firstSeen(v.ref, `node-plugin:${c.allocation.allocationId}`);
    // Stuck since both hold: the claim is released and the plugin is down.
    const since = Math.max(c.since, timeOr(gap.since, seen));
    if (ctx.now - since < t.missingPluginMs) continue;
    const where = nodeId === null ? 'any node' : `node ${nodeId}`;
    out.push({
      kind: 'CLAIM_ON_MISSING_PLUGIN',
      severity: blocksOtherClaims(d, c.attachment) ? 'CRITICAL' : 'WARNING',
      volume: v.ref,
      subject: `node-plugin:${c.allocation.allocationId}`,
      startedAt: new Date(since).toISOString(),
      summary: `The claim of ${describeAllocation(c)} cannot be released because plugin "${pluginId}" has no healthy node instance on ${where} (since ${at(since)}).`,
      evidence: evidence(d, facts, { nodeId, nodePluginHealthy: gap.healthy, attachment: c.attachment }),
      remedies: [
        restoreNodePlugin(pluginId, nodeId, gap.pluginAllocationId),
        ...(allReleased ? [forceDeregister(v.ref)] : []),
      ],
    });
  }
  const controllers = controllerGap(d, facts);
  if (controllers !== null) {
    const seen = ctx.firstSeen(v.ref, `controller:${pluginId}`);
    const since = timeOr(controllers.since, seen);
    if (ctx.now - since >= t.missingPluginMs) {
      const blocked = released.length > 0;
      out.push({
        kind: 'CLAIM_ON_MISSING_PLUGIN',
        severity: blocked ? 'CRITICAL' : 'WARNING',
        volume: v.ref,
        subject: `controller:${pluginId}`,
        startedAt: new Date(since).toISOString(),
        summary: `The volume needs a controller of plugin "${pluginId}" and none has been healthy since ${at(since)}, so it cannot be claimed${blocked ? ` and ${released.length} finished claim(s) cannot be released` : ''}.`,
        evidence: evidence(d, facts, { nodeId: null, nodePluginHealthy: null, attachment: null }),
        remedies: [restoreController(pluginId)],
      });
    }
  }
  return out;
}
