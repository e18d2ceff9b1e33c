/**
 * The simulated state store: tables, raft indexes, watches for blocking queries, event
 * publishing, plugin health views and the volume-watcher that releases claims.
 *
 * - Every write is a "raft apply" with its own index (`apply`). It bumps the index of each table it
 *   touched (X-Nomad-Index for CSI reads is the *table* index: hashicorp/nomad
 *   nomad/csi_endpoint.go), fires the watch keys of what it changed (blocking queries, nomad/rpc.go
 *   `blockingRPC`) and publishes its events as one buffer item (nomad/state/events.go). A failed
 *   apply still consumes an index.
 * - Watch keys mirror go-memdb watch channels: `csi_volumes` (whole table iterator),
 *   `vol:<ns>\0<id>` (one row, also fires on creation), `csi_plugins`, `plugin:<id>`,
 *   `alloc:<id>`, `node_allocs:<node>`.
 */
import { createHash } from 'node:crypto';
import { EventBroker, type SimEvent } from './broker';
import { applyClaim, cloneVolume, copyVolume } from './claims';
import type { GoJSON } from './encode';
import type { AllocRecord, CSIVolume, CSIVolumeClaim, NamespaceRecord, NodeRecord, PluginRecord } from './model';
import { allocTerminal, ClaimMode, ClaimState } from './model';
import { StorageProvider } from './provider';
import { allocEventWire, allocStubWire, pluginWire, volumeWire, type PluginInstance, type PluginView } from './wire';

/**
 * An error returned by a simulated RPC; the server maps it to an HTTP status (as hashicorp/nomad
 * command/agent/http.go `wrap` does).
 */
export class RpcError extends Error {
  constructor(
    message: string,
    /** Coded RPC errors (`NewErrRPCCoded`) carry their own status; others are 500. */
    readonly code?: number,
  ) {
    super(message);
  }
}

/** Unknown id in a control call (control API answers 404). */
export class NotFoundError extends Error {}

export const PERMISSION_DENIED = 'Permission denied';

interface Watcher {
  keys: Set<string>;
  done: (fired: boolean) => void;
}

interface ApplyOutcome {
  tables?: string[];
  keys?: string[];
  events?: SimEvent[];
}

export function volKey(ns: string, id: string): string {
  return `${ns}\u0000${id}`;
}

/** Deterministic UUID-shaped id derived from a seed (for synthetic plugin allocs, eval ids). */
export function seededUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export interface SimStateOptions {
  claimReleaseDelayMs: number;
  eventBufferSize: number;
}

export class SimState {
  readonly broker: EventBroker;
  /** Last raft index handed out. */
  index = 0;
  private readonly tableIndexes = new Map<string, number>();
  readonly namespaces = new Map<string, NamespaceRecord>();
  readonly nodes = new Map<string, NodeRecord>();
  readonly plugins = new Map<string, PluginRecord>();
  readonly volumes = new Map<string, CSIVolume>();
  readonly allocs = new Map<string, AllocRecord>();
  readonly providers = new Map<string, StorageProvider>();
  private readonly watchers = new Set<Watcher>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Allocations whose claims the simulated volume watcher is releasing. */
  private readonly releasing = new Set<string>();
  /**
   * Allocations whose claims the volume watcher failed to release (`failAllocation` with
   * `holdClaims`): they stay until the claim GC (`runClaimGC`) or a detach retries the unpublish.
   */
  readonly heldReleases = new Set<string>();
  /** Frees the paused volume watcher has yet to do, in the order they came due. */
  private readonly heldFrees: Array<() => void> = [];
  private watcherPaused = false;
  private closed = false;
  private readonly baseNs = BigInt(Date.now()) * 1000000n;
  private readonly hrStart = process.hrtime.bigint();

  constructor(readonly opts: SimStateOptions) {
    this.broker = new EventBroker(opts.eventBufferSize);
    this.apply(() => {
      this.namespaces.set('default', { Name: 'default', CreateIndex: this.index });
      return { tables: ['namespaces'] };
    });
  }

  /** Unix nanoseconds, monotonic, with sub-millisecond digits like Go's `time.Now().UnixNano()`. */
  now(): bigint {
    return this.baseNs + (process.hrtime.bigint() - this.hrStart);
  }

  // --- raft ----------------------------------------------------------------------------------

  tableIndex(table: string): number {
    return this.tableIndexes.get(table) ?? 0;
  }

  /**
   * Runs one write at a new raft index. If `fn` throws, the index is still consumed (raft
   * committed the log entry; the FSM rejected it) and the error propagates.
   */
  apply(fn: (index: number) => ApplyOutcome): number {
    const index = ++this.index;
    const out = fn(index);
    for (const t of out.tables ?? []) this.tableIndexes.set(t, index);
    this.notify([...(out.tables ?? []), ...(out.keys ?? [])]);
    if (out.events && out.events.length > 0) this.broker.publish(index, out.events);
    return index;
  }

  private notify(keys: string[]): void {
    if (keys.length === 0) return;
    for (const w of [...this.watchers]) {
      if (keys.some((k) => w.keys.has(k))) {
        this.watchers.delete(w);
        w.done(true);
      }
    }
  }

  /** Waits until one of `keys` fires (true) or the timeout passes / the state closes (false). */
  waitFor(keys: Set<string>, timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.watchers.delete(w);
          resolve(false);
        },
        Math.max(0, timeoutMs),
      );
      this.timers.add(timer);
      const w: Watcher = {
        keys,
        done: (fired) => {
          clearTimeout(timer);
          this.timers.delete(timer);
          resolve(fired);
        },
      };
      this.watchers.add(w);
    });
  }

  /** Schedules simulator-internal work (volume watcher); cancelled by close(). */
  later(ms: number, fn: () => void): void {
    if (this.closed || !Number.isFinite(ms)) return;
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (!this.closed) fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }

  /**
   * Schedules one free of the (simulated) volume watcher after `ms`; while the watcher is paused, a
   * free that comes due waits for {@link setVolumeWatcherPaused}(false). Real Nomad's volumewatcher
   * frees past claims whenever it gets to them (hashicorp/nomad nomad/volumewatcher/), so a read
   * may see them for any time after the write that released them.
   */
  watcherFree(ms: number, fn: () => void): void {
    this.later(ms, () => (this.watcherPaused ? this.heldFrees.push(fn) : fn()));
  }

  /** Pauses the volume watcher's frees, or resumes them (the held ones run at once, in order). */
  setVolumeWatcherPaused(paused: boolean): void {
    this.watcherPaused = paused;
    if (!paused) for (const free of this.heldFrees.splice(0)) if (!this.closed) free();
  }

  /** Ends all waits and timers. */
  close(): void {
    this.closed = true;
    for (const w of [...this.watchers]) {
      this.watchers.delete(w);
      w.done(false);
    }
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // --- lookups -------------------------------------------------------------------------------

  getVolume(ns: string, id: string): CSIVolume | undefined {
    return this.volumes.get(volKey(ns, id));
  }

  provider(pluginId: string): StorageProvider {
    let p = this.providers.get(pluginId);
    if (!p) {
      p = new StorageProvider();
      this.providers.set(pluginId, p);
    }
    return p;
  }

  /** Volumes in memdb `id` index order: by (Namespace, ID) byte-wise. */
  sortedVolumes(): CSIVolume[] {
    const key = (v: CSIVolume): Buffer => Buffer.from(`${v.Namespace}\u0000${v.ID}\u0000`, 'utf8');
    return [...this.volumes.values()].sort((a, b) => Buffer.compare(key(a), key(b)));
  }

  /**
   * The plugin's effective counters and fingerprint instances. Node plugins without an explicit
   * count run as a system job: one instance on every simulated node.
   */
  pluginView(id: string): PluginView | undefined {
    const p = this.plugins.get(id);
    if (!p) return undefined;
    const nodeIds = [...this.nodes.keys()];
    const instances = (type: 'controller' | 'node', count: number, healthy: number): PluginInstance[] => {
      const out: PluginInstance[] = [];
      for (let i = 0; i < count; i++) {
        const nodeId = nodeIds[i] ?? seededUuid(`${p.ID}/${type}/node/${i}`);
        out.push({
          nodeId,
          allocId: seededUuid(`${p.ID}/${type}/alloc/${nodeId}`),
          healthy: i < healthy,
          externalNodeId: this.externalNodeId(p, nodeId),
        });
      }
      return out;
    };
    const nodesExpected = p.NodesExpected ?? nodeIds.length;
    const nodesHealthy = p.NodesHealthy ?? nodesExpected;
    const controllers = instances(
      'controller',
      Math.max(p.ControllersHealthy, p.ControllersExpected),
      p.ControllersHealthy,
    );
    const nodes = instances('node', Math.max(nodesHealthy, nodesExpected), nodesHealthy);
    // An instance set on its own node keeps that health; the count follows the instances, as
    // Nomad's CSIPlugin.AddPlugin/UpdateExpectedWithJob count fingerprinted instances.
    for (const inst of nodes) {
      const own = p.nodeHealth.get(inst.nodeId);
      if (own) Object.assign(inst, { healthy: own.healthy, own });
    }
    return {
      record: p,
      controllers,
      nodes,
      ControllersHealthy: p.ControllersHealthy,
      ControllersExpected: p.ControllersExpected,
      NodesHealthy: p.nodeHealth.size === 0 ? nodesHealthy : nodes.filter((i) => i.healthy).length,
      NodesExpected: nodesExpected,
    };
  }

  /** The provider's id for a Nomad node (the node plugin's NodeInfo.ID). */
  externalNodeId(p: PluginRecord, nodeId: string): string {
    if (/ebs|aws/i.test(p.Provider) || /ebs|aws/i.test(p.ID)) {
      return 'i-' + createHash('sha256').update(nodeId).digest('hex').slice(0, 17);
    }
    return this.nodes.get(nodeId)?.Name ?? nodeId;
  }

  /** `HasControllerCapability`: needs at least one fingerprinted controller. */
  pluginHasCapability(view: PluginView, cap: keyof PluginRecord['capabilities']): boolean {
    return view.controllers.length > 0 && view.record.capabilities[cap];
  }

  /**
   * `csiVolumeDenormalizePluginsTxn`: copies health from the plugin at read time. Expected
   * counts are the number of fingerprinted instances, as in Nomad. Without a plugin, health
   * drops to 0 and the rest keeps what was stored (hashicorp/nomad nomad/state/state_store.go).
   */
  denormalizePlugins(v: CSIVolume): CSIVolume {
    const out = cloneVolume(v);
    const view = this.pluginView(v.PluginID);
    if (!view) {
      out.ControllersHealthy = 0;
      out.NodesHealthy = 0;
      out.Schedulable = false;
      return out;
    }
    out.Provider = view.record.Provider;
    out.ProviderVersion = view.record.Version;
    out.ControllerRequired = view.record.ControllerRequired;
    out.ControllersHealthy = view.ControllersHealthy;
    out.NodesHealthy = view.NodesHealthy;
    out.ControllersExpected = view.controllers.length;
    out.NodesExpected = view.nodes.length;
    out.Schedulable = out.NodesHealthy > 0 && (!out.ControllerRequired || out.ControllersHealthy > 0);
    return out;
  }

  /**
   * `CSIVolumeDenormalize` allocation part: stubs for allocs that still exist (ReadAllocs first,
   * then WriteAllocs) and synthesised past claims for GC'd ones. Adds watch keys for the allocs.
   */
  denormalizeAllocs(v: CSIVolume, ws?: Set<string>): { volume: CSIVolume; stubs: GoJSON[] } {
    const out = copyVolume(v);
    const stubs: GoJSON[] = [];
    const visit = (ids: Map<string, null>, claims: Map<string, CSIVolumeClaim>, mode: number): void => {
      for (const id of ids.keys()) {
        ws?.add(`alloc:${id}`);
        const a = this.allocs.get(id);
        if (a) {
          stubs.push(allocStubWire(a, this.nodes.get(a.NodeID)));
        } else if (!out.PastClaims!.has(id)) {
          const live = claims.get(id);
          out.PastClaims!.set(id, {
            AllocationID: id,
            NodeID: live?.NodeID ?? '',
            ExternalNodeID: live?.ExternalNodeID ?? '',
            Mode: mode,
            AccessMode: live?.AccessMode ?? '',
            AttachmentMode: live?.AttachmentMode ?? '',
            State: ClaimState.Unpublishing,
          });
        }
      }
    };
    visit(out.ReadAllocs!, out.ReadClaims!, ClaimMode.Read);
    visit(out.WriteAllocs!, out.WriteClaims!, ClaimMode.Write);
    return { volume: out, stubs };
  }

  // --- volume writes -------------------------------------------------------------------------

  /** The payload volume of a CSIVolume event: the stored object, sanitised, `Allocations: []`. */
  private volumeEvent(type: string, v: CSIVolume, index: number): SimEvent {
    return {
      Topic: 'CSIVolume',
      Type: type,
      Key: v.ID,
      Namespace: v.Namespace,
      FilterKeys: [v.ID, v.Name, v.PluginID],
      Index: index,
      Payload: { Volume: volumeWire(v, []) },
    };
  }

  /**
   * `UpsertCSIVolume` (register/create raft apply). Throws RpcError with the FSM's message;
   * returns the raft index.
   */
  upsertVolumes(vols: CSIVolume[]): number {
    let failure: string | null = null;
    const idx = this.apply((index) => {
      const staged = new Map<string, CSIVolume>();
      for (const input of vols) {
        const v = cloneVolume(input);
        if (!this.namespaces.has(v.Namespace)) {
          failure = `volume ${v.ID} is in nonexistent namespace ${v.Namespace}`;
          return {};
        }
        const key = volKey(v.Namespace, v.ID);
        const old = staged.get(key) ?? this.volumes.get(key);
        if (old) {
          if (old.ExternalID !== v.ExternalID || old.PluginID !== v.PluginID || old.Provider !== v.Provider) {
            failure = `volume identity cannot be updated: ${v.ID}`;
            return {};
          }
        } else {
          v.CreateIndex = index;
        }
        v.ModifyIndex = index;
        staged.set(key, v);
      }
      const events: SimEvent[] = [];
      const keys: string[] = [];
      for (const [key, v] of staged) {
        this.volumes.set(key, v);
        keys.push(`vol:${key}`);
        events.push(this.volumeEvent('CSIVolumeRegistered', v, index));
      }
      return { tables: ['csi_volumes'], keys, events };
    });
    if (failure !== null) throw new RpcError(failure);
    return idx;
  }

  /** `CSIVolumeDeregister`: throws `volume not found: <id>` / `volume in use: <id>`. */
  deregisterVolumes(ns: string, ids: string[], force: boolean): number {
    let failure: string | null = null;
    const idx = this.apply((index) => {
      const doomed: CSIVolume[] = [];
      for (const id of ids) {
        const v = this.getVolume(ns, id);
        if (!v) {
          failure = `volume not found: ${id}`;
          return {};
        }
        if ((v.ReadAllocs?.size ?? 0) > 0 || (v.WriteAllocs?.size ?? 0) > 0) {
          if (!force || !this.volSafeToForce(v)) {
            failure = `volume in use: ${id}`;
            return {};
          }
        }
        doomed.push(v);
      }
      const events: SimEvent[] = [];
      const keys: string[] = [];
      for (const v of doomed) {
        this.volumes.delete(volKey(v.Namespace, v.ID));
        keys.push(`vol:${volKey(v.Namespace, v.ID)}`);
        events.push(this.volumeEvent('CSIVolumeDeregistered', v, index));
      }
      return { tables: ['csi_volumes'], keys, events };
    });
    if (failure !== null) throw new RpcError(failure);
    return idx;
  }

  /** Force deregister is allowed only if every claiming alloc that still exists is terminal. */
  private volSafeToForce(v: CSIVolume): boolean {
    for (const id of [...(v.ReadAllocs?.keys() ?? []), ...(v.WriteAllocs?.keys() ?? [])]) {
      const a = this.allocs.get(id);
      if (a && !allocTerminal(a)) return false;
    }
    return true;
  }

  /**
   * The state store's `CSIVolumeClaim` for one or more claims at one raft index (a single claim
   * or a checkpoint, or a batch). The stored volume keeps the plugin health denormalised at
   * claim time. Throws RpcError/ClaimError from the first failing claim.
   */
  claimVolumes(claims: Array<{ ns: string; volumeId: string; claim: CSIVolumeClaim }>): number {
    // Set inside the callback, which tsc's narrowing does not follow: typed by the assertion.
    let failure = null as Error | null;
    const idx = this.apply((index) => {
      const staged = new Map<string, CSIVolume>();
      for (const { ns, volumeId, claim } of claims) {
        const key = volKey(ns, volumeId);
        const orig = staged.get(key) ?? this.volumes.get(key);
        if (!orig) {
          failure = new RpcError(`volume not found: ${volumeId}`);
          return {};
        }
        let vol = this.denormalizePlugins(copyVolume(orig));
        vol = this.denormalizeAllocs(vol).volume;
        if (claim.AllocationID !== '') {
          try {
            applyClaim(vol, { ...claim }, this.allocs.has(claim.AllocationID));
          } catch (e) {
            failure = e as Error;
            return {};
          }
        }
        vol.ModifyIndex = index;
        vol.ModifyTime = this.now();
        staged.set(key, vol);
      }
      const events: SimEvent[] = [];
      const keys: string[] = [];
      for (const [key, v] of staged) {
        this.volumes.set(key, v);
        keys.push(`vol:${key}`);
        events.push(this.volumeEvent('CSIVolumeClaim', v, index));
      }
      return { tables: ['csi_volumes'], keys, events };
    });
    if (failure !== null) throw failure;
    return idx;
  }

  // --- allocations ---------------------------------------------------------------------------

  /**
   * An `Allocation` topic event for a write to the allocs table (nomad/state/events.go): Key the
   * alloc id, FilterKeys `[JobID, DeploymentID]`, the alloc's namespace. `type` is the raft
   * message's event type: `PlanResult` for the scheduler's placements and stops,
   * `AllocationUpdated` for client status updates. Deleting an alloc (GC) publishes nothing.
   */
  allocEvent(type: string, a: AllocRecord, index: number): SimEvent {
    return {
      Topic: 'Allocation',
      Type: type,
      Key: a.ID,
      Namespace: a.Namespace,
      FilterKeys: [a.JobID, ''],
      Index: index,
      Payload: { Allocation: allocEventWire(a, this.nodes.get(a.NodeID)) },
    };
  }

  // --- plugins -------------------------------------------------------------------------------

  /** Publishes a CSIPlugin event for plugin changes (raft message type `NodeRegistration`). */
  pluginEvent(id: string, index: number): SimEvent[] {
    const view = this.pluginView(id);
    if (!view) return [];
    return [
      {
        Topic: 'CSIPlugin',
        Type: 'NodeRegistration',
        Key: id,
        Namespace: '',
        FilterKeys: [id],
        Index: index,
        Payload: { Plugin: pluginWire(view, null) },
      },
    ];
  }

  /** Plugin allocation stubs (controller and node instances) for a plugin read. */
  pluginAllocStubs(view: PluginView): GoJSON[] {
    const p = view.record;
    const stubs: GoJSON[] = [];
    const add = (inst: PluginInstance, type: 'controller' | 'nodes'): void => {
      const a: AllocRecord = {
        ID: inst.allocId,
        EvalID: seededUuid(`${inst.allocId}/eval`),
        Name: `plugin-${p.ID}-${type}.${type}[0]`,
        Namespace: 'default',
        NodeID: inst.nodeId,
        JobID: `plugin-${p.ID}-${type}`,
        JobType: type === 'nodes' && p.NodesExpected === null ? 'system' : 'service',
        JobVersion: 0,
        TaskGroup: type,
        DesiredStatus: 'run',
        DesiredDescription: '',
        ClientStatus: inst.healthy ? 'running' : 'pending',
        ClientDescription: inst.healthy ? 'Tasks are running' : 'No tasks have started',
        CreateIndex: p.CreateIndex,
        ModifyIndex: p.ModifyIndex,
        CreateTime: p.CreateTime,
        ModifyTime: p.UpdateTime,
        volumes: [],
      };
      stubs.push(allocStubWire(a, this.nodes.get(inst.nodeId)));
    };
    for (const inst of view.controllers) add(inst, 'controller');
    for (const inst of view.nodes) add(inst, 'nodes');
    return stubs;
  }

  /** Marks plugins whose node instances follow the node list as modified (node registration). */
  touchSystemPlugins(index: number): { keys: string[]; events: SimEvent[] } {
    const keys: string[] = [];
    const events: SimEvent[] = [];
    for (const p of this.plugins.values()) {
      if (p.NodesExpected !== null) continue;
      p.ModifyIndex = index;
      p.ModifyTime = this.now();
      p.UpdateTime = p.ModifyTime;
      keys.push(`plugin:${p.ID}`);
      events.push(...this.pluginEvent(p.ID, index));
    }
    return { keys, events };
  }

  // --- the volume watcher --------------------------------------------------------------------

  /**
   * Starts releasing an allocation's claims, like Nomad's client unpublish + volume watcher:
   * on the next tick each claim is checkpointed as a past claim (node-detached; it still counts
   * in ReadAllocs/WriteAllocs), then after `claimReleaseDelayMs` it is freed (hashicorp/nomad
   * nomad/csi_endpoint.go `Unpublish`, nomad/volumewatcher/), or once resumed if the watcher is paused.
   */
  releaseAllocClaims(allocId: string): void {
    if (this.releasing.has(allocId)) return;
    this.releasing.add(allocId);
    this.later(0, () => {
      for (const v of this.volumesClaimedBy(allocId)) {
        const live = v.ReadClaims?.get(allocId) ?? v.WriteClaims?.get(allocId);
        const past = v.PastClaims?.get(allocId);
        if (past && past.State !== ClaimState.Taken) continue;
        const claim: CSIVolumeClaim = {
          AllocationID: allocId,
          NodeID: live?.NodeID ?? past?.NodeID ?? '',
          ExternalNodeID: live?.ExternalNodeID ?? past?.ExternalNodeID ?? '',
          Mode: v.ReadAllocs?.has(allocId) ? ClaimMode.Read : ClaimMode.Write,
          AccessMode: live?.AccessMode ?? past?.AccessMode ?? '',
          AttachmentMode: live?.AttachmentMode ?? past?.AttachmentMode ?? '',
          State: ClaimState.NodeDetached,
        };
        // Unpublish checkpoints the past claim first; without its node plugin the node detach
        // fails and the claim stays at that first checkpoint (nomad/csi_endpoint.go `Unpublish`).
        if (this.nodeUnpublishFailure(v, claim) !== null) claim.State = ClaimState.Taken;
        try {
          this.claimVolumes([{ ns: v.Namespace, volumeId: v.ID, claim }]);
        } catch {
          /* the volume went away meanwhile */
        }
      }
      this.watcherFree(this.opts.claimReleaseDelayMs, () => this.freeAllocClaims(allocId));
    });
  }

  /** Volumes whose ReadAllocs/WriteAllocs mention the allocation. */
  volumesClaimedBy(allocId: string): CSIVolume[] {
    return [...this.volumes.values()].filter((v) => v.ReadAllocs?.has(allocId) || v.WriteAllocs?.has(allocId));
  }

  /**
   * Frees an allocation's claims (controller unpublish, then the ready-to-free checkpoint).
   * `only` restricts to one volume and the claims on one node (detach).
   */
  freeAllocClaims(allocId: string, only?: { ns: string; volumeId: string; nodeId: string }): void {
    if (!only) this.releasing.delete(allocId);
    // The volume watcher's attempt failed: the claims wait for the claim GC or a detach.
    if (!only && this.heldReleases.has(allocId)) return;
    for (const v of this.volumesClaimedBy(allocId)) {
      const claim = v.PastClaims?.get(allocId) ?? v.ReadClaims?.get(allocId) ?? v.WriteClaims?.get(allocId);
      if (!claim) continue;
      if (only && (v.Namespace !== only.ns || v.ID !== only.volumeId || claim.NodeID !== only.nodeId)) continue;
      if (this.nodeUnpublishFailure(v, claim) !== null || this.controllerUnpublishFailure(v, claim) !== null) continue;
      this.controllerUnpublish(v, claim);
      try {
        this.claimVolumes([{ ns: v.Namespace, volumeId: v.ID, claim: { ...claim, State: ClaimState.ReadyToFree } }]);
      } catch {
        /* the volume went away meanwhile */
      }
    }
  }

  /**
   * Why the node unpublish of `claim` fails, or null: its node is up and the volume's node plugin
   * instance there is unhealthy, so the client cannot reach the plugin (hashicorp/nomad
   * client/csi_endpoint.go `NodeDetachVolume` → csimanager `ManagerForPlugin`). A claim already
   * released client-side (no access mode) or on a down or GC'd node skips the node unpublish
   * (nomad/csi_endpoint.go `nodeUnpublishVolume`, `nodeUnpublishVolumeImpl`).
   */
  nodeUnpublishFailure(v: CSIVolume, claim: CSIVolumeClaim): string | null {
    const node = this.nodes.get(claim.NodeID);
    if (!node || node.Status === 'down' || claim.AccessMode === '') return null;
    const own = this.plugins.get(v.PluginID)?.nodeHealth.get(claim.NodeID);
    if (!own || own.healthy) return null;
    // The client's error, wrapped by the server as nodeUnpublishVolumeImpl does (the RPC layer's
    // own prefixes are not reproduced).
    return `could not detach from node: CSI.NodeDetachVolume: plugin ${v.PluginID} for type csi-node not found`;
  }

  /**
   * Why the controller unpublish of `claim` fails, or null: it is needed (see `controllerUnpublish`)
   * and no controller instance is healthy, so Nomad finds no client to send it to
   * (nomad/client_csi_endpoint.go `clientIDsForController`; nomad/csi_endpoint.go
   * `controllerUnpublishVolume` wraps it). The claim stays, node-detached.
   */
  controllerUnpublishFailure(v: CSIVolume, claim: CSIVolumeClaim): string | null {
    const view = this.pluginView(v.PluginID);
    if (!view || !this.needsControllerUnpublish(v, view, claim) || view.ControllersHealthy > 0) return null;
    const why = view.controllers.map((c) => `plugin instance "${c.allocId}" is not healthy`).join('\n');
    return `could not detach from controller: failed to find clients running controller plugin "${v.PluginID}": ${why}`;
  }

  /** Whether Nomad sends a controller unpublish for `claim` (`controllerUnpublishVolume`'s conditions). */
  private needsControllerUnpublish(v: CSIVolume, view: PluginView, claim: CSIVolumeClaim): boolean {
    if (!view.record.ControllerRequired || !this.pluginHasCapability(view, 'SupportsAttachDetach')) return false;
    for (const id of [...(v.ReadAllocs?.keys() ?? []), ...(v.WriteAllocs?.keys() ?? [])]) {
      const a = this.allocs.get(id);
      if (a && a.ID !== claim.AllocationID && a.NodeID === claim.NodeID && !allocTerminal(a)) return false;
    }
    return true;
  }

  /**
   * `controllerUnpublishVolume`: detaches the provider volume from the node unless the plugin
   * has no controller/attach support or another live alloc on the same node still uses it.
   */
  controllerUnpublish(v: CSIVolume, claim: CSIVolumeClaim): void {
    const view = this.pluginView(v.PluginID);
    if (!view || !this.needsControllerUnpublish(v, view, claim)) return;
    this.provider(v.PluginID).unpublish(v.ExternalID || v.ID, claim.ExternalNodeID);
  }
}
