/**
 * A faithful HashiCorp Nomad CSI-volumes HTTP simulator: a real HTTP server that answers the
 * `/v1/volumes`, `/v1/volume/csi/…`, `/v1/plugins`, `/v1/plugin/csi/…`, `/v1/volumes/external`,
 * `/v1/volumes/snapshot`, `/v1/event/stream` and `/v1/status/leader` endpoints with Nomad's wire
 * behaviour (read from hashicorp/nomad's code: README.md, docs/upstream.md), plus in-process
 * seeding/control methods and the same controls over HTTP under `/_sim/` (README.md).
 *
 * @example
 * const sim = new NomadSimulator();
 * const url = await sim.listen();
 * sim.addToken({ secret: 'root', management: true });
 * sim.addNode({ id: 'node-1', name: 'client-1' });
 * sim.addPlugin({ id: 'aws-ebs0', provider: 'ebs.csi.aws.com', version: 'v1.38.1', controllerRequired: true });
 * sim.seedVolume({ ID: 'vol1', PluginID: 'aws-ebs0', ExternalID: 'vol-0123456789abcdef0' });
 * // … fetch(`${url}/v1/volumes?type=csi`, { headers: { 'X-Nomad-Token': 'root' } })
 * await sim.close();
 */
import { AclStore, type TokenSpec } from './acl';
import {
  addExternalVolume,
  addNamespace,
  addNode,
  addPlugin,
  addSnapshot,
  gcAllocation,
  placeAllocation,
  seedVolume,
  setAllocationStatus,
  setPluginHealth,
  type AllocationSpec,
  type PluginSpec,
} from './cluster';
import type { ControlTarget } from './control';
import { failAllocation, runClaimGC, setNodePluginHealth } from './failures';
import { seedDemoCluster } from './demo';
import { SimServer, type RequestLogEntry } from './server';
import { NotFoundError, SimState } from './state';

export { ClaimError } from './claims';
export type { ControllerCapabilities } from './model';
export type { RequestLogEntry } from './server';
export type { TokenSpec } from './acl';
export type { AllocationSpec, PluginSpec } from './cluster';
export { seedDemoCluster } from './demo';

/** Construction options. */
export interface NomadSimulatorOptions {
  /**
   * Region reported in responses; requests naming another `?region=` fail with
   * `500 No path to region`.
   * @default 'global'
   */
  region?: string;
  /** ACL system. @default { enabled: true } */
  acl?: {
    enabled: boolean;
    /**
     * Namespaces the anonymous policy may list/read (csi-list/read + plugin read); '*' = all.
     * @default [] (anonymous denied)
     */
    anonymousRead?: string[] | '*';
  };
  /**
   * Delay before a terminal allocation's claim is released by the simulated volume watcher (the
   * claim stays in ReadAllocs/WriteAllocs meanwhile, as a past claim). Use Infinity to keep it
   * until `DELETE …/detach?node=` is called.
   * @default 0 (released immediately, asynchronously on next tick)
   */
  claimReleaseDelayMs?: number;
  /** Interval of `{}` heartbeats on `/v1/event/stream`. @default 30000 (Nomad's 30 s) */
  eventHeartbeatMs?: number;
  /** Number of raft indexes kept in the event buffer (Nomad's `event_buffer_size`). @default 100 */
  eventBufferSize?: number;
  /**
   * Compress responses for clients that send `Accept-Encoding: gzip`/`deflate`, as Nomad's
   * gorilla CompressHandler does (an "empty" 200 then carries a compressed empty stream and a
   * sniffed Content-Type). @default true
   */
  compression?: boolean;
}

export class NomadSimulator implements ControlTarget {
  private readonly state: SimState;
  private readonly aclStore: AclStore;
  private readonly server: SimServer;

  constructor(options: NomadSimulatorOptions = {}) {
    this.state = new SimState({
      claimReleaseDelayMs: options.claimReleaseDelayMs ?? 0,
      eventBufferSize: options.eventBufferSize ?? 100,
    });
    this.aclStore = new AclStore(options.acl?.enabled ?? true, options.acl?.anonymousRead ?? []);
    this.server = new SimServer({
      state: this.state,
      acl: this.aclStore,
      region: options.region ?? 'global',
      eventHeartbeatMs: options.eventHeartbeatMs ?? 30000,
      compression: options.compression ?? true,
      control: this,
    });
  }

  /** Starts the HTTP server; returns the base URL, e.g. "http://127.0.0.1:43121". */
  listen(port = 0, host = '127.0.0.1'): Promise<string> {
    return this.server.listen(port, host);
  }

  /** Stops the server, ending blocking queries, event streams and pending timers. */
  async close(): Promise<void> {
    this.state.close();
    await this.server.close();
  }

  /** The base URL once listening ("" before). */
  get url(): string {
    return this.server.url;
  }

  /** Every request received, in order (control API under /_sim excluded). */
  requests(): RequestLogEntry[] {
    return this.server.requests();
  }

  clearRequests(): void {
    this.server.clearRequests();
  }

  /** TCP connections the HTTP server accepted since listen (control API ones included). */
  connectionsAccepted(): number {
    return this.server.connectionsAccepted();
  }

  /** Adds a namespace ('default' exists from the start). */
  addNamespace(name: string): void {
    addNamespace(this.state, name);
  }

  /** Adds an ACL token. */
  addToken(t: TokenSpec): void {
    this.aclStore.add(t);
  }

  /** Ends every open `/v1/event/stream` response (clients see the stream end); returns how many. */
  closeStreams(): number {
    return this.server.closeStreams();
  }

  /** Deletes an ACL token (revocation): requests carrying it are then refused. */
  removeToken(secret: string): void {
    if (!this.aclStore.remove(secret)) throw new NotFoundError(`token not found`);
  }

  /** Adds a client node (node plugins of system-job plugins fingerprint on it). */
  addNode(n: { id: string; name: string }): void {
    addNode(this.state, n);
  }

  /** Adds (or replaces) a CSI plugin. */
  addPlugin(p: PluginSpec): void {
    addPlugin(this.state, p);
  }

  /** Changes plugin health; volumes' Schedulable and health fields follow at read time. */
  setPluginHealth(id: string, h: { controllersHealthy?: number; nodesHealthy?: number }): void {
    setPluginHealth(this.state, id, h);
  }

  /**
   * Stores a volume as if registered (plugin must exist); fields in Nomad's Go names (ID, Name,
   * Namespace, PluginID, ExternalID, RequestedCapabilities, MountOptions, Secrets, Parameters,
   * Context, Capacity, RequestedCapacityMin/Max, Topologies, RequestedTopologies, SnapshotID,
   * CloneID). Also creates the provider-side volume for ExternalID if the plugin lacks it.
   * RequestedCapabilities defaults to one single-node-writer/file-system block.
   */
  seedVolume(v: Record<string, unknown>): void {
    seedVolume(this.state, v);
  }

  /** A provider-side (plugin) volume that Nomad doesn't know (shows in /v1/volumes/external). */
  addExternalVolume(
    pluginId: string,
    v: {
      ExternalID: string;
      CapacityBytes: number;
      PublishedExternalNodeIDs?: string[];
      Status?: string;
      IsAbnormal?: boolean;
    },
  ): void {
    addExternalVolume(this.state, pluginId, v);
  }

  /** A provider-side snapshot (CreateTime in Unix seconds). */
  addSnapshot(
    pluginId: string,
    s: { ID: string; ExternalSourceVolumeID: string; SizeBytes: number; CreateTime?: number; IsReady?: boolean },
  ): void {
    addSnapshot(this.state, pluginId, s);
  }

  /**
   * Places an allocation that claims volumes, applying Nomad's claim rules (schedulable, max
   * claims per access mode, attachment mode); throws ClaimError with Nomad's message otherwise.
   * Returns the alloc ID.
   */
  placeAllocation(a: AllocationSpec): string {
    return placeAllocation(this.state, a);
  }

  /**
   * Changes an allocation's client/desired status. A terminal client status
   * (complete|failed|lost) or desired stop/evict moves its claims to past claims, released after
   * `claimReleaseDelayMs`.
   */
  setAllocationStatus(id: string, s: { clientStatus?: string; desiredStatus?: string }): void {
    setAllocationStatus(this.state, id, s);
  }

  /** Garbage-collects an allocation (its stub disappears; an unreleased claim stays as a key). */
  gcAllocation(id: string): void {
    gcAllocation(this.state, id);
  }

  /**
   * Fails an allocation (client status `failed`); with `holdClaims`, the volume watcher's release
   * of its claims fails, so they stay until `runClaimGC` or a detach (failures.ts).
   */
  failAllocation(id: string, o: { holdClaims?: boolean } = {}): void {
    failAllocation(this.state, id, o);
  }

  /** Stops (`healthy: false`) or restarts the node plugin instance of a plugin on one node (failures.ts). */
  setNodePluginHealth(pluginId: string, nodeId: string, healthy: boolean): void {
    setNodePluginHealth(this.state, pluginId, nodeId, healthy);
  }

  /** Runs Nomad's claim GC now, as `nomad system gc` does (failures.ts); how many allocations' claims it retried. */
  runClaimGC(): number {
    return runClaimGC(this.state);
  }

  /**
   * Pauses the simulated volume watcher, or resumes it: while paused, the past claims it would free
   * (a terminal allocation's after `claimReleaseDelayMs`, those `DELETE …/detach?node=` released)
   * stay on the volume; on resume the held frees run at once. Real Nomad's volumewatcher frees them
   * whenever it gets to them, so a client may read them for any time after the detach answered.
   */
  setVolumeWatcherPaused(paused: boolean): void {
    this.state.setVolumeWatcherPaused(paused);
  }

  /** Fault injection: every request (not /_sim) waits this long first. */
  setLatency(ms: number): void {
    this.server.setLatency(ms);
  }

  /** The next `count` requests matching method/pathPrefix answer `status` with a text/plain `body`. */
  failNext(f: { count: number; status: number; body: string; method?: string; pathPrefix?: string }): void {
    this.server.failNext(f);
  }

  /** Seeds the demo cluster (see demo.ts). */
  seedDemo(variant: 'east' | 'west'): { managementToken: string; readOnlyToken: string } {
    return seedDemoCluster(this, variant);
  }
}
