/**
 * The one extra read of a Nomad doctor pass: CSI plugin health. The watcher's view holds volumes,
 * whose plugin counts Nomad copies in when the volume is read (and the view re-reads a volume only
 * when it or its allocations change), never which node's instance is unhealthy.
 *
 * One pass: `GET /v1/plugins?type=csi` (one call, no pagination on the wire), then
 * `GET /v1/plugin/csi/:id` for each plugin whose node or controller instances are not all healthy,
 * to learn which ones. A healthy cluster costs one call per pass; each degraded plugin one more.
 */
import type { CallOptions } from '../../contract/call-options';
import type { HealthCount, Plugin, PluginInstance } from '../../contract/model';
import { mapWithConcurrency } from '../../http/concurrency';
import type { NomadContext } from '../context';
import { getPlugin, listPlugins } from '../plugins/operations';

/** Plugins read at once in one pass. */
const PLUGIN_READS = 4;

/** One plugin instance's health, as its node's client last fingerprinted it. */
export interface InstanceHealth {
  healthy: boolean;
  /** When the instance's health last changed (CSIInfo.UpdateTime, the client's clock). */
  since: string | null;
  description: string | null;
  /** The plugin's own allocation on that node. */
  allocationId: string | null;
}

/** What a pass knows of one plugin. */
export interface PluginFacts {
  controllerRequired: boolean | null;
  controllers: HealthCount;
  nodes: HealthCount;
  /**
   * The node instances by node id; null when not read because every listed instance is healthy
   * (then a claim's node is taken as healthy: see docs/nomad.md, "Volume doctor").
   */
  nodeInstances: ReadonlyMap<string, InstanceHealth> | null;
  /** When the last controller instance became unhealthy, when none is healthy and the plugin was read. */
  controllersDownSince: string | null;
}

/** The facts of one pass. */
export interface NomadDiagnosisFacts {
  /** Every CSI plugin Nomad lists, by id; a volume's plugin absent here is unknown to Nomad. */
  plugins: ReadonlyMap<string, PluginFacts>;
}

const degraded = (p: Plugin): boolean =>
  p.nodes.healthy < p.nodes.expected || p.controllers.healthy < p.controllers.expected;

const health = (i: PluginInstance): InstanceHealth => ({
  healthy: i.healthy,
  since: i.updatedAt,
  description: i.healthDescription,
  allocationId: i.allocationId,
});

/** The latest of `times` (RFC 3339, compared as instants); null when none is given. */
function latest(times: ReadonlyArray<string | null>): string | null {
  let best: string | null = null;
  for (const t of times) if (t !== null && (best === null || Date.parse(t) > Date.parse(best))) best = t;
  return best;
}

function factsOf(stub: Plugin, full: Plugin | null): PluginFacts {
  const instances = full?.detail?.instances ?? null;
  const controllers = instances?.filter((i) => i.role === 'CONTROLLER') ?? [];
  return {
    controllerRequired: stub.controllerRequired,
    controllers: stub.controllers,
    nodes: stub.nodes,
    nodeInstances:
      instances === null
        ? null
        : new Map(instances.filter((i) => i.role === 'NODE').map((i) => [i.nodeId, health(i)] as const)),
    controllersDownSince:
      controllers.length > 0 && controllers.every((i) => !i.healthy)
        ? latest(controllers.map((i) => i.updatedAt))
        : null,
  };
}

/** One pass's plugin health, read with `o` (the service credential). */
export async function readFacts(ctx: NomadContext, o: CallOptions): Promise<NomadDiagnosisFacts> {
  const stubs = await listPlugins(ctx, o);
  const toRead = stubs.filter(degraded);
  // A plugin deregistered between the list and the read answers 404: keep its stub's counts.
  const reads = await mapWithConcurrency(toRead, PLUGIN_READS, (p) => getPlugin(ctx, p.nativeId, o));
  const full = new Map(toRead.map((p, i) => [p.nativeId, reads[i] ?? null] as const));
  return { plugins: new Map(stubs.map((p) => [p.nativeId, factsOf(p, full.get(p.nativeId) ?? null)] as const)) };
}
