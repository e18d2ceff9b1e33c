/**
 * The OpenStack backend for one region: Cinder volumes, snapshots and attachments plus Nova
 * server volume attachments. This class is the contract layer only: each method delegates to the
 * folder that does the work (`volumes/`, `snapshots/`, `attachments/`, `actions/`,
 * `completion/check.ts`), which speaks to the services through `cinder/` and `nova/`. Asynchronous
 * changes come back with a completion rule (data, `completion/rules.ts`) that `checkChange`
 * evaluates. The live path: `createWatcher` (`watch/`, with the service credential) and the
 * subscriber access check (`access.ts`).
 */
import type { VolumeBackend } from '../contract/backend';
import type { Accepted, BackendPage, OpaquePage } from '../contract/call-answers';
import type {
  AttachTarget,
  DeleteSnapshotOptions,
  DeleteVolumeOptions,
  DetachTarget,
  HostConnector,
  OwnAttachInput,
  OwnCreateInput,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeListQuery,
  VolumeSpec,
} from '../contract/call-inputs';
import type { CallOptions, CallerCredential, ProbeCall } from '../contract/call-options';
import {
  advertise,
  CORE_CAPABILITIES,
  type CallerScope,
  type NamespaceName,
  type HostAttachments,
  type ServerAttachments,
  type SnapshotReads,
  type VolumeActions,
  type VolumePatch,
  type VolumeReader,
  type VolumeUpdates,
} from '../contract/capabilities';
import type { CinderAction, CinderActionResult } from './actions/types';
import type { ChangeCheck, CompletionRule, TrackedChanges } from '../contract/completion';
import type {
  Attachment,
  BackendHealth,
  KeyValue,
  ComputeServer,
  Snapshot,
  Volume,
  VolumeRef,
} from '../contract/model';
import { BreakerBoard } from '../contract/breaker';
import type { AccessGrant, SubscriberAccess, VolumeWatcher, Watching, WatcherOptions } from '../contract/watch';
import type { Diagnosis, DiagnosisContext, Finding, ProblemKind } from '../contract/diagnosis';
import * as diagnosis from './diagnosis';
import type { DiagnosisThresholds, InView, NovaFacts } from './diagnosis';
import * as access from './access';
import * as actions from './actions/operations';
import * as attach from './attachments/operations';
import * as batch from './volumes/batch';
import { OpenStackClient, type OpenStackClientOptions } from './client';
import { checkChange } from './completion/check';
import type { OpenStackContext } from './context';
import * as hosts from './attachments/hosts';
import { ATTACH_INPUT } from './attachments/input';
// Defines the kind's identifier scheme for the contract's id checks (adapters/contract/ids.ts).
import './ids';
import { toRequestedAttachment } from './nova/results';
import * as servers from './attachments/servers';
import * as snapshots from './snapshots/operations';
import { CREATE_INPUT } from './volumes/input';
import * as volumes from './volumes/operations';
import { health } from './health';
import { createWatcher, WATCH_DEFAULTS, type OpenStackWatcherOptions } from './watch';
import { OPENSTACK_SETTINGS } from './settings';

export interface OpenStackBackendOptions extends OpenStackClientOptions {
  /** Longest an asynchronous change (attach, extend …) may take before its operation is TIMED_OUT. @default 120000 */
  operationTimeoutMs?: number;
  /** Watcher poll interval while an operation is pending or a transition is in its window (ms). @default 500 */
  watchFastMs?: number;
  /** Watcher poll interval otherwise, while anyone listens (ms). @default 10000 */
  watchSlowMs?: number;
  /** How long one transition of a volume keeps the watcher fast after it is first seen (ms). @default 30000 */
  watchTransitionWindowMs?: number;
  /** The volume doctor's thresholds (diagnosis/thresholds.ts); each absent one at its default. @default DIAGNOSIS_DEFAULTS, driftGraceMs 2 × watchSlowMs */
  doctor?: Partial<DiagnosisThresholds>;
  /** Servers per page of the doctor's Nova listing (tests page with fewer). @default 1000 */
  doctorServerPageSize?: number;
}

export class OpenStackBackend
  implements
    VolumeBackend,
    VolumeUpdates,
    SnapshotReads,
    VolumeActions,
    HostAttachments,
    ServerAttachments,
    TrackedChanges,
    Watching,
    SubscriberAccess,
    CallerScope,
    Diagnosis<NovaFacts>
{
  readonly id: string;
  readonly kind = 'OPENSTACK';
  // Facets (capabilities.ts): this class implements each one itself, by delegation.
  readonly volumeUpdates: VolumeUpdates = this;
  readonly snapshotReads: SnapshotReads = this;
  readonly volumeActions: VolumeActions = this;
  readonly hostAttachments: HostAttachments = this;
  readonly serverAttachments: ServerAttachments = this;
  readonly trackedChanges: TrackedChanges = this;
  readonly watching: Watching = this;
  readonly subscriberAccess: SubscriberAccess = this;
  readonly callerScope: CallerScope = this;
  readonly diagnosis: Diagnosis<NovaFacts> = this;
  /** The doctor's kinds (diagnosis/). */
  readonly kinds: readonly ProblemKind[] = diagnosis.OPENSTACK_PROBLEM_KINDS;
  readonly capabilities = advertise(this, CORE_CAPABILITIES);
  readonly createInput: OwnCreateInput = CREATE_INPUT;
  /** Nova's device tag rule, checked before any call. */
  readonly attachInput: OwnAttachInput = ATTACH_INPUT;
  /** Every call needs the caller's Keystone token. */
  readonly requiresCredential = true;
  readonly #c: OpenStackClient;
  readonly #ctx: OpenStackContext;
  readonly #o: OpenStackBackendOptions;
  readonly #doctor: diagnosis.DiagnosisDeps;

  constructor(o: OpenStackBackendOptions) {
    this.id = o.backend;
    // One board for the callers' client and the watcher's: both go through the same breakers.
    this.#o = { ...o, breakers: o.breakers ?? new BreakerBoard() };
    this.#c = new OpenStackClient(this.#o);
    this.#ctx = {
      backend: o.backend,
      client: this.#c,
      operationTimeoutMs: o.operationTimeoutMs ?? OPENSTACK_SETTINGS.operationTimeoutMs.default,
    };
    this.#doctor = {
      backend: o.backend,
      client: this.#c,
      thresholds: diagnosis.resolveThresholds(o.doctor ?? {}, o.watchSlowMs ?? WATCH_DEFAULTS.slowMs),
      serverPageSize: o.doctorServerPageSize,
    };
  }

  health(signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
    return health(this.#c, signal, probe);
  }

  // ---- core -----------------------------------------------------------------------------------

  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    return volumes.volumePage(this.#ctx, q, o);
  }

  getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    return volumes.getVolume(this.#ctx, ref, o);
  }

  getVolumes(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>> {
    return batch.getVolumes(this.#ctx, refs, o, concurrency);
  }

  createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    return volumes.createVolume(this.#ctx, spec, o);
  }

  deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    return volumes.deleteVolume(this.#ctx, ref, opts, o);
  }

  attachVolume(ref: VolumeRef, target: AttachTarget, o: CallOptions): Promise<Accepted<Attachment | null>> {
    return attach.attachVolume(this.#ctx, ref, target, o);
  }

  detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    return attach.detachVolume(this.#ctx, ref, target, o);
  }

  extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>> {
    return volumes.extendVolume(this.#ctx, ref, newSizeBytes, o);
  }

  listSnapshots(q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
    return snapshots.listSnapshots(this.#ctx, q, o);
  }

  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    return snapshots.createSnapshot(this.#ctx, spec, o);
  }

  deleteSnapshot(ref: SnapshotRef, opts: DeleteSnapshotOptions, o: CallOptions): Promise<Accepted<void>> {
    return snapshots.deleteSnapshot(this.#ctx, ref, opts, o);
  }

  close(): Promise<void> {
    return this.#c.close();
  }

  // ---- capabilities ---------------------------------------------------------------------------

  updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume> {
    return volumes.updateVolume(this.#ctx, ref, patch, o);
  }

  getSnapshot(ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null> {
    return snapshots.getSnapshot(this.#ctx, ref, o);
  }

  runVolumeAction(ref: VolumeRef, action: CinderAction, o: CallOptions): Promise<Accepted<CinderActionResult>> {
    return actions.runCinderAction(this.#ctx, ref, action, o);
  }

  showImageMetadata(ref: VolumeRef, o: CallOptions): Promise<KeyValue[]> {
    return actions.showImageMetadata(this.#ctx, ref, o);
  }

  listHostAttachments(
    scope: string,
    q: { volumeId?: string; limit: number; token: string | null },
    o: CallOptions,
  ): Promise<OpaquePage<Attachment>> {
    return hosts.listHostAttachments(this.#ctx, scope, q, o);
  }

  reserveHostAttachment(ref: VolumeRef, o: CallOptions): Promise<Attachment> {
    return hosts.reserveHostAttachment(this.#ctx, ref, o);
  }

  updateHostAttachment(
    ref: VolumeRef,
    attachmentId: string,
    connector: HostConnector,
    o: CallOptions,
  ): Promise<Attachment> {
    return hosts.updateHostAttachment(this.#ctx, ref, attachmentId, connector, o);
  }

  completeHostAttachment(ref: VolumeRef, attachmentId: string, o: CallOptions): Promise<void> {
    return hosts.completeHostAttachment(this.#ctx, ref, attachmentId, o);
  }

  getServers(ids: readonly string[], o: CallOptions): Promise<Map<string, ComputeServer>> {
    return batch.getServers(this.#ctx, ids, o);
  }

  listServerAttachments(
    serverIds: readonly string[],
    o: CallOptions,
    readVolumes?: VolumeReader,
  ): Promise<Map<string, Attachment[]>> {
    return servers.serverAttachments(this.#ctx, serverIds, o, readVolumes);
  }

  startedAttachment(ref: VolumeRef, target: Extract<AttachTarget, { kind: 'server' }>): Attachment {
    return toRequestedAttachment(ref, target);
  }

  updateServerAttachment(
    serverId: string,
    volumeId: string,
    change: { newVolumeId?: string; deleteOnTermination?: boolean },
    o: CallOptions,
  ): Promise<Accepted<void>> {
    return servers.updateServerAttachment(this.#ctx, serverId, volumeId, change, o);
  }

  checkChange(rule: CompletionRule, o: CallOptions): Promise<ChangeCheck> {
    return checkChange(this.#ctx, rule, o);
  }

  // ---- live path ------------------------------------------------------------------------------

  /**
   * A watcher with its own client (own pools, closed by its `stop()`; the same service credential),
   * or `unavailable` without a service credential. `o` may carry `OpenStackWatcherOptions` (tests).
   */
  createWatcher(o: WatcherOptions & Partial<OpenStackWatcherOptions>): VolumeWatcher | { unavailable: string } {
    return createWatcher(this.id, this.#c, this.#o, o);
  }

  checkAccess(scope: string, _volume: VolumeRef, o: CallOptions): Promise<AccessGrant> {
    return access.checkAccess(this.#c, scope, o);
  }

  checkCredential(o: CallOptions): Promise<void> {
    return access.checkCredential(this.#c, o);
  }

  callerNamespace(o: CallOptions): Promise<NamespaceName | null> {
    return access.callerNamespace(this.#c, o);
  }

  redact(volume: Volume, grant: AccessGrant): Volume {
    return access.redact(volume, grant);
  }

  serviceCredential(): Promise<CallerCredential | null> {
    return access.serviceCredential(this.#c);
  }

  // ---- volume doctor --------------------------------------------------------------------------

  /** One Nova listing of servers with their volumes (every page), with the service credential in `o`. */
  readFacts(o: CallOptions): Promise<NovaFacts> {
    return diagnosis.readFacts(this.#doctor, o);
  }

  checkVolume(volume: Volume, facts: NovaFacts | null, ctx: DiagnosisContext): Finding[] {
    return diagnosis.checkVolume(this.#doctor, volume, facts, ctx);
  }

  checkFacts(facts: NovaFacts, inView: InView, ctx: DiagnosisContext): Finding[] {
    return diagnosis.checkFacts(this.#doctor, facts, inView, ctx);
  }
}
