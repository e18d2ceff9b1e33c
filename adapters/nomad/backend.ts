/**
 * The `VolumeBackend` for one Nomad cluster, with Nomad's facets: registration, storage plugins,
 * node attachments, tracked changes, the live path and the volume doctor's checks (`diagnosis/`).
 * This class is the contract layer only: each method delegates to the module that does the work
 * (`volumes/operations.ts`, `volumes/claims.ts`, `snapshots/operations.ts`, `plugins/operations.ts`,
 * `cluster/health.ts`, `completion/check.ts`).
 * The live path: `createWatcher` (`watch/`, with the service token) and the subscriber access check
 * (`access.ts`).
 *
 * Nomad answers every write once the plugin has finished, except the frees a detach leaves to its
 * volume watcher: such a detach comes back with a completion rule (`completion/rules.ts`) that
 * `checkChange` evaluates. What Nomad cannot do (attach, extend, detach from anything but a node)
 * is refused with the reason (`volumes/operations.ts`).
 */
import type { VolumeBackend } from '../contract/backend';
import type { Accepted, BackendPage, OpaquePage } from '../contract/call-answers';
import type {
  AttachTarget,
  DeleteSnapshotOptions,
  DeleteVolumeOptions,
  DetachTarget,
  OwnCreateInput,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeListQuery,
  VolumeSpec,
} from '../contract/call-inputs';
import type { CallOptions, ProbeCall } from '../contract/call-options';
import {
  advertise,
  type CoreCapability,
  type NodeAttachments,
  type StoragePlugins,
  type VolumeReader,
  type VolumeRegistration,
} from '../contract/capabilities';
import type { ChangeCheck, CompletionRule, TrackedChanges } from '../contract/completion';
import type { Diagnosis } from '../contract/diagnosis';
import type {
  Attachment,
  BackendHealth,
  Capability,
  ExternalVolume,
  Plugin,
  Snapshot,
  Volume,
  VolumeRef,
} from '../contract/model';
import type {
  AccessGrant,
  SubscriberAccess,
  ViewReadProof,
  VolumeWatcher,
  Watching,
  WatcherOptions,
} from '../contract/watch';
import { BreakerBoard, type Breaker } from '../contract/breaker';
import type { TransportOptions } from '../http/transport';
import * as access from './access';
import { NAMESPACE_READ_PROOF } from './access';
import { NomadClient } from './client';
import * as cluster from './cluster/health';
import { checkChange } from './completion/check';
import type { NomadContext } from './context';
import { NomadDiagnosis, type NomadDiagnosisFacts, type NomadDiagnosisThresholds } from './diagnosis';
// Defines the kind's identifier scheme for the contract's id checks (adapters/contract/ids.ts).
import './ids';
import * as plugins from './plugins/operations';
import * as snapshots from './snapshots/operations';
import * as claims from './volumes/claims';
import { CREATE_INPUT } from './volumes/input';
import * as volumes from './volumes/operations';
import * as watch from './watch';

/** Options of a {@link NomadBackend}: the transport's, the service token and the watcher's tuning. */
export interface NomadBackendOptions extends TransportOptions {
  /**
   * The gateway's own token: watchers only, never callers' requests. Without one there is no
   * watcher (with ACLs off, any value will do: Nomad ignores it). @default none
   */
  token?: string;
  /** The watcher's tuning (`watch/tuning.ts`). @default the defaults documented there */
  watch?: watch.NomadWatchTuning;
  /** Where this backend's breaker (service `nomad`) lives. @default a board of its own with the default settings */
  breakers?: BreakerBoard;
  /** The volume doctor's thresholds (`diagnosis/thresholds.ts`). @default DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS */
  diagnosis?: Partial<NomadDiagnosisThresholds>;
}

/** The core methods Nomad does (it neither attaches nor extends); the facets add the rest. */
const CORE: readonly CoreCapability[] = [
  'LIST_VOLUMES',
  'READ_VOLUME',
  'CREATE_VOLUME',
  'DELETE_VOLUME',
  'DETACH_VOLUME',
  'CREATE_SNAPSHOT',
  'DELETE_SNAPSHOT',
  'LIST_SNAPSHOTS',
];

export class NomadBackend
  implements
    VolumeBackend,
    VolumeRegistration,
    StoragePlugins,
    NodeAttachments,
    TrackedChanges,
    Watching,
    SubscriberAccess
{
  readonly id: string;
  readonly kind = 'NOMAD';
  // Facets (capabilities.ts): this class implements each one itself, by delegation.
  readonly registration: VolumeRegistration = this;
  readonly storagePlugins: StoragePlugins = this;
  readonly nodeAttachments: NodeAttachments = this;
  readonly trackedChanges: TrackedChanges = this;
  readonly watching: Watching = this;
  readonly subscriberAccess: SubscriberAccess = this;
  /** The volume doctor's checks (`diagnosis/`): stuck claims and claims on a missing plugin. */
  readonly diagnosis: Diagnosis<NomadDiagnosisFacts>;
  /** Set in the constructor, once every facet is (`diagnosis` needs the client). */
  readonly capabilities: ReadonlySet<Capability>;
  /**
   * Nomad's ACL is per namespace and no volume field depends on the caller, so one read of the
   * caller's proves what the watcher's view may show it (access.ts).
   */
  readonly viewReadProof: ViewReadProof = NAMESPACE_READ_PROOF;
  readonly createInput: OwnCreateInput = CREATE_INPUT;
  readonly snapshotsPerPlugin = 'Nomad lists snapshots per plugin';
  /** Nomad's anonymous ACL policy may allow reads, so a caller without a token is still asked. */
  readonly requiresCredential = false;
  readonly #client: NomadClient;
  readonly #ctx: NomadContext;
  readonly #options: NomadBackendOptions;
  /** Every call to this Nomad goes through it; the watcher reports DEGRADED while it is open. */
  readonly breaker: Breaker;

  constructor(options: NomadBackendOptions) {
    this.id = options.backend;
    this.#options = options;
    this.breaker = (options.breakers ?? new BreakerBoard()).get(options.backend, 'nomad');
    this.#client = new NomadClient({ ...options, breaker: this.breaker });
    this.#ctx = { backend: options.backend, client: this.#client };
    this.diagnosis = new NomadDiagnosis(this.#ctx, options.diagnosis);
    this.capabilities = advertise(this, CORE);
  }

  health(signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
    return cluster.health(this.#ctx, signal, probe);
  }

  // ---- volumes ----------------------------------------------------------------------------

  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    return volumes.volumePage(this.#ctx, q, o);
  }

  getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    return volumes.getVolume(this.#ctx, ref, o);
  }

  getVolumes(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>> {
    return volumes.getVolumes(this.#ctx, refs, o, concurrency);
  }

  createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    return volumes.createVolume(this.#ctx, spec, o);
  }

  registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef> {
    return volumes.registerVolume(this.#ctx, spec, o);
  }

  deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void> {
    return volumes.deregisterVolume(this.#ctx, ref, force, o);
  }

  deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    return volumes.deleteVolume(this.#ctx, ref, opts, o);
  }

  attachVolume(ref: VolumeRef, target: AttachTarget, o: CallOptions): Promise<Accepted<Attachment | null>> {
    return volumes.attachVolume(this.#ctx, ref, target, o);
  }

  detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    return volumes.detachVolume(this.#ctx, ref, target, o);
  }

  extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>> {
    return volumes.extendVolume(this.#ctx, ref, newSizeBytes, o);
  }

  // ---- snapshots --------------------------------------------------------------------------

  listSnapshots(q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
    return snapshots.listSnapshots(this.#ctx, q, o);
  }

  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    return snapshots.createSnapshot(this.#ctx, spec, o);
  }

  deleteSnapshot(ref: SnapshotRef, opts: DeleteSnapshotOptions, o: CallOptions): Promise<Accepted<void>> {
    return snapshots.deleteSnapshot(this.#ctx, ref, opts, o);
  }

  // ---- plugins, provider volumes and node attachments -------------------------------------

  listPlugins(o: CallOptions): Promise<Plugin[]> {
    return plugins.listPlugins(this.#ctx, o);
  }

  getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null> {
    return plugins.getPlugin(this.#ctx, pluginId, o);
  }

  listExternalVolumes(
    q: { pluginId: string; namespace: string; limit: number; token: string | null },
    o: CallOptions,
  ): Promise<OpaquePage<ExternalVolume>> {
    return plugins.listExternalVolumes(this.#ctx, q, o);
  }

  listNodeAttachments(
    nodeIds: readonly string[],
    o: CallOptions,
    readVolumes?: VolumeReader,
  ): Promise<Map<string, Attachment[]>> {
    return claims.listNodeAttachments(this.#ctx, nodeIds, o, readVolumes);
  }

  // ---- tracked changes --------------------------------------------------------------------

  checkChange(rule: CompletionRule, o: CallOptions): Promise<ChangeCheck> {
    return checkChange(this.#ctx, rule, o);
  }

  // ---- the live path ----------------------------------------------------------------------

  /** A watcher reading with the service token on connections of its own; none without a token. */
  createWatcher(o: WatcherOptions): VolumeWatcher | { unavailable: string } {
    const { baseUrl, onCall, token, watch: tuning } = this.#options;
    return watch.createWatcher(
      { backend: this.id, client: this.#client, breaker: this.breaker, baseUrl, onCall, token, tuning },
      o,
    );
  }

  checkAccess(scope: string, volume: VolumeRef, o: CallOptions): Promise<AccessGrant> {
    return access.checkAccess(this.#ctx, scope, volume, o);
  }

  checkCredential(o: CallOptions): Promise<void> {
    return access.checkCredential(this.#ctx, o);
  }

  redact(volume: Volume, grant: AccessGrant): Volume {
    return access.redact(volume, grant);
  }

  serviceCredential(): Promise<{ token: string } | null> {
    return access.serviceCredential(this.#options.token);
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
