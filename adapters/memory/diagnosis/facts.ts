/**
 * What one doctor's pass reads beside the watcher's view: the workloads claims name, the hosts'
 * own records and plugin instances, and the storage plugin's controllers. The memory backend holds
 * them itself, so the read is one look at its store (through its injected faults, as every call).
 */
import type { CallOptions } from '../../contract/call-options';
import type { MemoryContext } from '../context';
import type { HostData, WorkloadData } from '../data/shape';

/** The storage plugin, with its defaults applied and its node instances counted. */
export interface PluginFacts {
  id: string;
  controllerRequired: boolean;
  controllersExpected: number;
  controllersHealthy: number;
  /** Hosts declared (each runs a node instance); null when hosts are not declared. */
  nodesExpected: number | null;
  /** Hosts whose instance is healthy; null when hosts are not declared. */
  nodesHealthy: number | null;
}

/** One pass's facts. */
export interface MemoryFacts {
  /** The backend the facts are of. */
  backend: string;
  workloads: ReadonlyMap<string, WorkloadData>;
  /** The hosts the backend knows by name; null when the data declare none (nothing is known of hosts). */
  hosts: ReadonlyMap<string, HostData> | null;
  /** Per volume (`namespace/id`), the hosts whose own record lists it. */
  hostVolumes: ReadonlyMap<string, readonly string[]>;
  plugin: PluginFacts;
}

/** The facts as the store holds them now. */
export function factsOf(ctx: MemoryContext): MemoryFacts {
  const { workloads, hosts, storagePlugin: p } = ctx.store.world;
  const byVolume = new Map<string, string[]>();
  for (const h of hosts ?? [])
    for (const key of h.volumes ?? []) byVolume.set(key, [...(byVolume.get(key) ?? []), h.name]);
  const controllerRequired = p?.controllerRequired ?? false;
  const controllersExpected = p?.controllersExpected ?? (controllerRequired ? 1 : 0);
  return {
    backend: ctx.backend,
    workloads: new Map((workloads ?? []).map((w) => [w.id, w])),
    hosts: hosts ? new Map(hosts.map((h) => [h.name, h])) : null,
    hostVolumes: byVolume,
    plugin: {
      id: p?.id ?? 'memory',
      controllerRequired,
      controllersExpected,
      controllersHealthy: p?.controllersHealthy ?? controllersExpected,
      nodesExpected: hosts ? hosts.length : null,
      nodesHealthy: hosts ? hosts.filter((h) => (h.plugin ?? 'healthy') === 'healthy').length : null,
    },
  };
}

/** `readFacts`: the gateway's own read (the service credential), so no grant is checked. */
export function readFacts(ctx: MemoryContext, o: CallOptions): Promise<MemoryFacts> {
  return ctx.faults.call(o, () => factsOf(ctx));
}
