/**
 * The OpenStack `VolumeBackend`: Cinder volumes, snapshots and attachments plus Nova server
 * volume attachments, for one region. Asynchronous changes come back with a `PendingChange`
 * whose `check` knows how that change completes (backends.md 3.3): attach on Cinder (in-use and
 * listing the server), detach on Nova (gone from the server's os-volume_attachments), the rest
 * on the volume or snapshot status.
 */
import {
  BaseBackend,
  type Accepted,
  type AttachTarget,
  type BackendPage,
  type CallOptions,
  type ChangeProgress,
  type DeleteVolumeOptions,
  type DetachTarget,
  type OpaquePage,
  type PendingChange,
  type SnapshotSpec,
  type VolumeAction,
  type VolumeActionResult,
  type VolumeListQuery,
  type VolumePatch,
  type VolumeSpec,
} from '../backend';
import { mapWithConcurrency } from '../concurrency';
import { BadUserInputError, GatewayError, NotFoundError, isStatus } from '../errors';
import type { Attachment, BackendHealth, Capability, KeyValue, OpenStackServer, ServerVolumeAttachment, Snapshot, Volume, VolumeRef } from '../model';
import { OpenStackClient, type OpenStackClientOptions } from './client';
import { UUID } from './ids';
import { FEATURES } from './microversions';
import * as req from './requests';
import {
  GIB,
  toHostAttachment,
  toServer,
  toServerVolumeAttachment,
  toSnapshot,
  toVolume,
  type CinderSnapshot,
  type CinderVolume,
  type NovaServer,
} from './results';

const CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'LIST_VOLUMES',
  'READ_VOLUME',
  'CREATE_VOLUME',
  'DELETE_VOLUME',
  'UPDATE_VOLUME',
  'ATTACH_VOLUME',
  'DETACH_VOLUME',
  'EXTEND_VOLUME',
  'REVERT_VOLUME',
  'CREATE_SNAPSHOT',
  'DELETE_SNAPSHOT',
  'LIST_SNAPSHOTS',
  'HOST_ATTACHMENTS',
  'SERVER_ATTACHMENTS',
  'VOLUME_ACTIONS',
  'TRACKED_OPERATIONS',
]);

/** Listing token meaning "from the start" (Cinder markers are the id of the last item seen). */
const START = '^';
/** Cinder's and Nova's page cap (osapi_max_limit). */
const MAX_LIMIT = 1000;

/**
 * Batch sizes from which the gateway reads one list-detail page instead of N parallel shows.
 * On the simulator shows stay faster up to 16-32 ids (bench/RESULTS.md, "OpenStack batch
 * strategy"), but every show is an API request with its own token check and database read on
 * the cloud (about 20 ms each on the recorded Cinder), so from 8 ids the gateway trades a little
 * latency for a bounded call count: one list call instead of up to N.
 */
export const LIST_STRATEGY_THRESHOLD = { volumes: 8, servers: 8 } as const;

export interface OpenStackBackendOptions extends OpenStackClientOptions {
  /** Poll hint for pending changes' deadlines. @default 120000 */
  operationTimeoutMs?: number;
}

export class OpenStackBackend extends BaseBackend {
  readonly id: string;
  readonly kind = 'OPENSTACK' as const;
  readonly capabilities = CAPABILITIES;
  readonly #c: OpenStackClient;
  readonly #timeoutMs: number;

  constructor(o: OpenStackBackendOptions) {
    super();
    this.id = o.backend;
    this.#c = new OpenStackClient(o);
    this.#timeoutMs = o.operationTimeoutMs ?? 120_000;
  }

  async health(signal?: AbortSignal): Promise<BackendHealth> {
    const started = performance.now();
    const checkedAt = new Date().toISOString();
    try {
      if (this.#c.keystone.hasServiceAuth) {
        // With its own credential the gateway also proves Cinder and Nova answer.
        // Fresh version documents each time: a cached range would report UP through an outage.
        const s = await this.#c.keystone.serviceSession();
        await Promise.all([this.#c.probe(s, 'volume', signal), this.#c.probe(s, 'compute', signal)]);
        return { status: 'UP', latencyMs: performance.now() - started, message: null, checkedAt };
      }
      const status = await this.#c.probeKeystone(signal);
      if (status !== 200) return { status: 'DOWN', latencyMs: performance.now() - started, message: `Keystone answered ${status}`, checkedAt };
      return { status: 'UP', latencyMs: performance.now() - started, message: 'Keystone reachable (no service credential: Cinder and Nova not probed)', checkedAt };
    } catch (err) {
      return { status: 'DOWN', latencyMs: null, message: err instanceof Error ? err.message : String(err), checkedAt };
    }
  }

  // ---- volumes ------------------------------------------------------------------------------

  override async listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    const session = await this.#c.session(o);
    // A token sees its own project; node and plugin are Nomad notions with no Cinder match.
    if ((q.namespace !== '*' && q.namespace !== session.projectId) || q.node || q.plugin) return { items: [], next: null };
    const marker = this.#marker(q.token);
    const limit = Math.min(q.limit, MAX_LIMIT);
    const { data } = await req.listVolumesDetail(this.#c, { limit, marker, filters: q.name ? { name: q.name } : undefined }, o);
    const volumes = data?.volumes ?? [];
    const items = volumes.map((v, i) => ({ item: toVolume(this.id, session.projectId, v), position: i === 0 ? (marker ?? START) : volumes[i - 1]!.id }));
    // Cinder links a full final page too; the merged listing's extra item makes hasNextPage exact.
    const next = data?.volumes_links?.some((l) => l.rel === 'next') && volumes.length > 0 ? volumes[volumes.length - 1]!.id : null;
    return { items, next };
  }

  override async getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    const v = await this.#show(ref.nativeId, o);
    return v ? toVolume(this.id, ref.namespace, v) : null;
  }

  /**
   * Many volumes of one project: parallel shows for small batches; from
   * {@link LIST_STRATEGY_THRESHOLD} on, one list-detail page (1000) of the project and a pick,
   * then shows for any not on that page. So a batch costs at most 1 + (misses) calls, however
   * large the project.
   */
  async getVolumes(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>> {
    const listed = refs.length >= LIST_STRATEGY_THRESHOLD.volumes ? await this.#listFirstVolumePage(o) : null;
    return mapLimited(refs, concurrency, async (r) => {
      if (listed && r.namespace !== listed.projectId) return null;
      return listed?.volumes.get(r.nativeId) ?? this.getVolume(r, o);
    });
  }

  /** The caller project's first 1000 volumes with details, by id. */
  async #listFirstVolumePage(o: CallOptions): Promise<{ projectId: string; volumes: Map<string, Volume> }> {
    const { projectId } = await this.#c.session(o);
    const { data } = await req.listVolumesDetail(this.#c, { limit: MAX_LIMIT }, o);
    return { projectId, volumes: new Map((data?.volumes ?? []).map((v) => [v.id, toVolume(this.id, projectId, v)] as const)) };
  }

  override async createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    const session = await this.#c.session(o);
    if (spec.namespace !== 'default' && spec.namespace !== session.projectId) {
      throw new BadUserInputError(`volumes are created in the caller's project (${session.projectId}); input.namespace names another`, 'input.namespace');
    }
    const body: req.CreateVolumeBody = { name: spec.name };
    if (spec.sizeGiB !== undefined) body.size = spec.sizeGiB;
    if (spec.description !== undefined) body.description = spec.description;
    if (spec.volumeType !== undefined) body.volume_type = spec.volumeType;
    if (spec.availabilityZone !== undefined) body.availability_zone = spec.availabilityZone;
    if (spec.metadata?.length) body.metadata = record(spec.metadata);
    if (spec.snapshotId !== undefined) body.snapshot_id = uuid(spec.snapshotId, 'input.snapshotId');
    if (spec.cloneId !== undefined) body.source_volid = uuid(spec.cloneId, 'input.cloneId');
    if (body.size === undefined && !body.snapshot_id && !body.source_volid) throw new BadUserInputError('creating an OpenStack volume needs input.sizeGiB (or a snapshot or source volume)', 'input.sizeGiB');
    const { data } = await req.createVolume(this.#c, body, o);
    const id = data?.volume.id;
    if (!id) throw new NotFoundError(`backend "${this.id}" reported no volume after create`, { backend: this.id });
    const ref = { backend: this.id, namespace: session.projectId, nativeId: id };
    return { result: ref, pending: this.#waitVolume(id, (v) => (v === null ? fail('the volume disappeared while being created', null) : v.status === 'available' ? done(v) : v.status.startsWith('error') ? this.#failed(v, o) : running(v))) };
  }

  override async updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume> {
    const body: { name?: string; description?: string; metadata?: Record<string, string> } = {};
    if (patch.name !== undefined) body.name = patch.name;
    if (patch.description !== undefined) body.description = patch.description;
    if (patch.metadata !== undefined) body.metadata = record(patch.metadata);
    if (Object.keys(body).length === 0) throw new BadUserInputError('nothing to change: give name, description or metadata', 'input');
    const { data } = await req.updateVolume(this.#c, uuid(ref.nativeId, 'input.id'), body, o);
    // PUT answers carry no os-vol-* keys: read back for the full view.
    return (await this.getVolume(ref, o)) ?? toVolume(this.id, ref.namespace, data!.volume);
  }

  override async deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    if (opts.secrets.length > 0) throw new BadUserInputError('secrets are a Nomad option; OpenStack deletes need none', 'input.secrets');
    await req.deleteVolume(this.#c, uuid(ref.nativeId, 'input.id'), opts, o);
    return { result: undefined, pending: this.#untilGone(ref.nativeId, o) };
  }

  override async extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>> {
    if (newSizeBytes % GIB !== 0) throw new BadUserInputError('Cinder sizes are whole GiB: newSizeBytes must be a multiple of 1073741824', 'input.newSizeBytes');
    const newSize = newSizeBytes / GIB;
    const current = await this.#show(ref.nativeId, o);
    if (!current) throw new NotFoundError(`volume ${ref.nativeId} not found on backend "${this.id}"`, { backend: this.id, httpStatus: 404 });
    if (newSize <= current.size) {
      throw new BadUserInputError(`the new size (${newSize} GiB) must be larger than the current size (${current.size} GiB): Cinder only grows volumes`, 'input.newSizeBytes');
    }
    const need = current.status === 'in-use' ? { version: FEATURES.volume.extendInUse, feature: 'extending an attached (in-use) volume' } : undefined;
    await req.volumeAction(this.#c, ref.nativeId, 'os-extend', { new_size: newSize }, o, need);
    return {
      result: undefined,
      pending: this.#waitVolume(ref.nativeId, (v) => {
        if (v === null) return fail('the volume disappeared while being extended', null);
        if (v.status === 'error_extending') return this.#failed(v, o);
        return v.status !== 'extending' && v.size >= newSize ? done(v) : running(v);
      }),
    };
  }

  // ---- attach / detach ---------------------------------------------------------------------

  override async attachVolume(ref: VolumeRef, t: AttachTarget, o: CallOptions): Promise<Accepted<Attachment | null>> {
    const volumeId = uuid(ref.nativeId, 'input.volumeId');
    if (t.serverId && t.connector) throw new BadUserInputError('attach to a server (serverId) or to a host (connector), not both', 'input');
    if (t.serverId) {
      const serverId = uuid(t.serverId, 'input.serverId');
      if (t.readOnly) throw new BadUserInputError('Nova attaches volumes read-write; readOnly needs a host attachment', 'input.readOnly');
      const body: req.NovaAttachBody = { volumeId };
      if (t.device !== undefined) body.device = t.device;
      if (t.tag !== undefined) body.tag = t.tag;
      if (t.deleteOnTermination !== undefined) body.delete_on_termination = t.deleteOnTermination;
      await req.attachServerVolume(this.#c, serverId, body, o);
      return { result: null, pending: this.#attachToServer(volumeId, serverId, o) };
    }
    if (!t.connector) throw new BadUserInputError('give input.serverId (attach through Nova) or input.connector (attach a host through Cinder)', 'input.serverId');
    if (t.device !== undefined || t.tag !== undefined || t.deleteOnTermination !== undefined) {
      throw new BadUserInputError('device, tag and deleteOnTermination are Nova server options', 'input');
    }
    // Host attach: create with the connector (volume `attaching`), then complete (`in-use`).
    const { data } = await req.createAttachment(this.#c, { volume_uuid: volumeId, connector: t.connector, ...(t.readOnly ? { mode: 'ro' as const } : {}) }, o);
    const attachment = data!.attachment;
    await req.completeAttachment(this.#c, attachment.id, o);
    return {
      result: await this.#readHostAttachment(ref.namespace, attachment.id, o),
      pending: this.#waitVolume(volumeId, (v) =>
        v === null ? fail('the volume disappeared while being attached', null) : v.status === 'in-use' && (v.attachments ?? []).some((a) => a.attachment_id === attachment.id) ? done(v) : v.status.startsWith('error') ? this.#failed(v, o) : running(v),
      ),
    };
  }

  override async detachVolume(ref: VolumeRef, t: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    const volumeId = uuid(ref.nativeId, 'input.volumeId');
    if (t.nodeId) throw new BadUserInputError('nodeId is a Nomad option; give serverId or attachmentId', 'input.nodeId');
    if (t.serverId && t.attachmentId) throw new BadUserInputError('detach from a server (serverId) or a host attachment (attachmentId), not both', 'input');
    if (t.serverId) {
      const serverId = uuid(t.serverId, 'input.serverId');
      await req.detachServerVolume(this.#c, serverId, volumeId, o);
      return { result: undefined, pending: this.#detachFromServer(volumeId, serverId, o) };
    }
    if (!t.attachmentId) throw new BadUserInputError('give input.serverId (detach through Nova) or input.attachmentId (a host attachment)', 'input.serverId');
    const attachmentId = uuid(t.attachmentId, 'input.attachmentId');
    await req.deleteAttachment(this.#c, attachmentId, o);
    return {
      result: undefined,
      pending: this.#waitVolume(volumeId, (v) => (v === null || !(v.attachments ?? []).some((a) => a.attachment_id === attachmentId) ? done(v) : v.status === 'error_detaching' ? this.#failed(v, o) : running(v))),
    };
  }

  /** Attach through Nova completes on Cinder: `in-use` and listing the server (backends.md 3.3). */
  #attachToServer(volumeId: string, serverId: string, o: CallOptions): PendingChange {
    let started = false;
    return this.#waitVolume(volumeId, async (v) => {
      if (v === null) return fail('the volume no longer exists', null);
      const attached = (v.attachments ?? []).some((a) => a.server_id === serverId);
      if (v.status === 'in-use' && attached) return done(v);
      if (v.status.startsWith('error')) return this.#failed(v, o);
      if (v.status === 'reserved' || v.status === 'attaching') started = true;
      // Back to available after having started: Nova rolled the attach back.
      if (started && v.status === 'available' && !attached) {
        return fail(`the attach was rolled back: the volume is available again${await this.#reason(volumeId, o, '')}`, v.status);
      }
      return running(v);
    });
  }

  /** Detach through Nova completes when the server no longer lists the volume. */
  #detachFromServer(volumeId: string, serverId: string, o: CallOptions): PendingChange {
    let started = false;
    return {
      timeoutMs: this.#timeoutMs,
      check: async (co) => {
        const listed = await req.listServerVolumeAttachments(this.#c, serverId, {}, co).then(
          (r) => (r.data?.volumeAttachments ?? []).some((a) => a.volumeId === volumeId),
          (err: unknown) => {
            if (isStatus(err, 404)) return false; // the server is gone: so is the attachment
            throw err;
          },
        );
        const v = await this.#show(volumeId, co);
        if (!listed) return { state: 'SUCCEEDED', backendStatus: v?.status ?? null };
        if (v?.status === 'detaching') started = true;
        if (v?.status === 'error_detaching') return this.#failed(v, o);
        if (started && v?.status === 'in-use') return fail(`the detach was rolled back: the volume is in-use again${await this.#reason(volumeId, co, '')}`, v.status);
        return { state: 'RUNNING', backendStatus: v?.status ?? null };
      },
    };
  }

  // ---- Cinder volume actions -----------------------------------------------------------------

  override async volumeAction(ref: VolumeRef, a: VolumeAction, o: CallOptions): Promise<Accepted<VolumeActionResult>> {
    const id = uuid(ref.nativeId, 'input.id');
    const act = <T = unknown>(body: unknown, need?: { version: string; feature: string }): Promise<T | undefined> =>
      req.volumeAction<T>(this.#c, id, a.kind, body, o, need).then((r) => r.data);
    const none: Accepted<VolumeActionResult> = { result: {}, pending: null };
    // After an action that leaves a transitional status, wait for the volume to leave it.
    const settle = (transitional: string, kindOk: (v: CinderVolume) => boolean = () => true): Accepted<VolumeActionResult> => ({
      result: {},
      pending: this.#waitVolume(id, (v) => (v === null ? fail('the volume disappeared', null) : v.status.startsWith('error') ? this.#failed(v, o) : v.status !== transitional && kindOk(v) ? done(v) : running(v))),
    });
    switch (a.kind) {
      case 'os-extend_volume_completion':
        // Cinder before 3.71 has no such action (400 "There is no such action"): refuse first.
        await act({ error: a.error }, { version: FEATURES.volume.extendCompletion, feature: 'completing a volume extend' });
        return none;
      case 'os-reset_status': {
        const body: Record<string, string> = {};
        if (a.status !== undefined) body.status = a.status;
        if (a.attachStatus !== undefined) body.attach_status = a.attachStatus;
        if (a.migrationStatus !== undefined) body.migration_status = a.migrationStatus;
        await act(body);
        return none;
      }
      case 'revert':
        await act({ snapshot_id: uuid(a.snapshotId, 'input.snapshotId') }, { version: FEATURES.volume.revert, feature: 'reverting to a snapshot' });
        return settle('reverting');
      case 'os-set_image_metadata': {
        const data = await act<{ metadata: Record<string, string> }>({ metadata: record(a.metadata) });
        return { result: { imageMetadata: pairs(data?.metadata) }, pending: null };
      }
      case 'os-unset_image_metadata':
        await act({ key: a.key });
        return none;
      case 'os-show_image_metadata': {
        const data = await act<{ metadata: Record<string, string> }>({});
        return { result: { imageMetadata: pairs(data?.metadata) }, pending: null };
      }
      case 'os-attach': {
        if (Boolean(a.serverId) === Boolean(a.hostName)) throw new BadUserInputError('os-attach needs exactly one of serverId and hostName', 'input');
        await act({ ...(a.serverId ? { instance_uuid: uuid(a.serverId, 'input.serverId') } : { host_name: a.hostName }), mountpoint: a.mountpoint, mode: a.readOnly ? 'ro' : 'rw' });
        return none;
      }
      case 'os-detach':
        await act({ attachment_id: a.attachmentId ? uuid(a.attachmentId, 'input.attachmentId') : null });
        return none;
      case 'os-unmanage':
        await act({});
        return { result: {}, pending: this.#untilGone(id, o) };
      case 'os-force_detach': {
        const body: Record<string, unknown> = {};
        if (a.attachmentId) body.attachment_id = uuid(a.attachmentId, 'input.attachmentId');
        if (a.connector) body.connector = a.connector;
        await act(body);
        return none;
      }
      case 'os-retype':
        await act({ new_type: a.newType, migration_policy: a.onDemandMigration ? 'on-demand' : 'never' });
        return settle('retyping', (v) => v.volume_type === a.newType || v.status !== 'retyping');
      case 'os-migrate_volume': {
        if (!a.host && !a.cluster) throw new BadUserInputError('migrating needs input.host or input.cluster', 'input.host');
        const body: Record<string, unknown> = {};
        if (a.host) body.host = a.host;
        if (a.cluster) body.cluster = a.cluster;
        if (a.forceHostCopy !== undefined) body.force_host_copy = a.forceHostCopy;
        if (a.lockVolume !== undefined) body.lock_volume = a.lockVolume;
        await act(body, a.cluster ? { version: FEATURES.volume.migrateToCluster, feature: 'migrating to a cluster' } : undefined);
        return {
          result: {},
          pending: this.#waitVolume(id, (v) => {
            if (v === null) return fail('the volume disappeared while migrating', null);
            const m = v.migration_status;
            if (m === 'error') return fail('Cinder reports migration_status error', v.status);
            if (m === 'success' || ((m === null || m === undefined || m === 'none') && v.status !== 'maintenance')) return done(v);
            return running(v);
          }),
        };
      }
      case 'os-migrate_volume_completion': {
        const data = await act<{ save_volume_id: string }>({ new_volume: uuid(a.newVolumeId, 'input.newVolumeId'), error: a.error });
        return { result: { savedVolumeId: data?.save_volume_id }, pending: null };
      }
      case 'os-force_delete':
        await act({});
        return { result: {}, pending: this.#untilGone(id, o) };
      case 'os-set_bootable':
        await act({ bootable: a.bootable });
        return none;
      case 'os-volume_upload_image': {
        const body: Record<string, unknown> = { image_name: a.imageName };
        if (a.force !== undefined) body.force = a.force;
        if (a.diskFormat !== undefined) body.disk_format = a.diskFormat;
        if (a.containerFormat !== undefined) body.container_format = a.containerFormat;
        if (a.visibility !== undefined) body.visibility = a.visibility;
        if (a.protected !== undefined) body.protected = a.protected;
        const data = await act<{ 'os-volume_upload_image': { image_id: string; image_name: string; disk_format?: string; container_format?: string } }>(body);
        const img = data?.['os-volume_upload_image'];
        const s = settle('uploading');
        return { result: img ? { image: { id: img.image_id, name: img.image_name, diskFormat: img.disk_format ?? null, containerFormat: img.container_format ?? null } } : {}, pending: s.pending };
      }
      case 'os-reserve':
      case 'os-unreserve':
      case 'os-begin_detaching':
      case 'os-roll_detaching':
        await act({});
        return none;
      case 'os-terminate_connection':
        await act({ connector: a.connector });
        return none;
      case 'os-initialize_connection': {
        const data = await act<{ connection_info: unknown }>({ connector: a.connector });
        return { result: { connectionInfo: data?.connection_info ?? null }, pending: null };
      }
      case 'os-update_readonly_flag':
        await act({ readonly: a.readonly });
        return none;
      case 'os-reimage':
        await act({ image_id: uuid(a.imageId, 'input.imageId'), reimage_reserved: a.reimageReserved }, { version: FEATURES.volume.reimage, feature: 'reimaging' });
        return settle('downloading');
    }
  }

  // ---- snapshots ----------------------------------------------------------------------------

  override async createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    if (spec.pluginId || spec.parameters?.length || spec.secrets?.length) throw new BadUserInputError('plugin, parameters and secrets are Nomad options', 'input');
    const session = await this.#c.session(o);
    const body: { volume_id: string; name?: string; description?: string; force?: boolean } = { volume_id: uuid(spec.volume.nativeId, 'input.volumeId'), name: spec.name };
    if (spec.description !== undefined) body.description = spec.description;
    if (spec.force) body.force = true;
    const { data } = await req.createSnapshot(this.#c, body, o);
    const snap = data!.snapshot;
    return {
      result: toSnapshot(this.id, session.projectId, snap),
      pending: this.#waitSnapshot(snap.id, (s) => (s === null ? fail('the snapshot disappeared while being created', null) : s.status === 'available' ? { state: 'SUCCEEDED', backendStatus: s.status } : s.status.startsWith('error') ? fail(`Cinder set the snapshot to ${s.status}`, s.status) : { state: 'RUNNING', backendStatus: s.status })),
    };
  }

  override async deleteSnapshot(_scope: string, snapshotId: string, secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>> {
    if (secrets.length > 0) throw new BadUserInputError('secrets are a Nomad option', 'input.secrets');
    await req.deleteSnapshot(this.#c, uuid(snapshotId, 'input.id'), o);
    return {
      result: undefined,
      pending: this.#waitSnapshot(snapshotId, (s) => (s === null ? { state: 'SUCCEEDED', backendStatus: 'deleted' } : s.status === 'error_deleting' ? fail('Cinder could not delete the snapshot (error_deleting)', s.status) : { state: 'RUNNING', backendStatus: s.status })),
    };
  }

  override async listSnapshots(_scope: string, limit: number, token: string | null, secrets: KeyValue[], o: CallOptions): Promise<OpaquePage<Snapshot>> {
    if (secrets.length > 0) throw new BadUserInputError('secrets are a Nomad option', 'secrets');
    const session = await this.#c.session(o);
    const marker = this.#marker(token);
    const { data } = await req.listSnapshotsDetail(this.#c, { limit: Math.min(limit, MAX_LIMIT), marker }, o);
    const snaps = data?.snapshots ?? [];
    const next = data?.snapshots_links?.some((l) => l.rel === 'next') && snaps.length > 0 ? snaps[snaps.length - 1]!.id : null;
    return { items: snaps.map((s) => toSnapshot(this.id, session.projectId, s)), next };
  }

  override async getSnapshot(scope: string, snapshotId: string, o: CallOptions): Promise<Snapshot | null> {
    if (!UUID.test(snapshotId)) return null;
    try {
      const { data } = await req.showSnapshot(this.#c, snapshotId, o);
      return data ? toSnapshot(this.id, scope, data.snapshot) : null;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  // ---- host attachments (Cinder attachments API) --------------------------------------------

  override async listHostAttachments(scope: string, q: { volumeId?: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<Attachment>> {
    const marker = this.#marker(q.token);
    const limit = Math.min(q.limit, MAX_LIMIT);
    const { data } = await req.listAttachmentsDetail(this.#c, { limit, marker, filters: q.volumeId ? { volume_id: uuid(q.volumeId, 'volumeId') } : undefined }, o);
    const list = data?.attachments ?? [];
    // The attachments list never has links: a full page may have more behind it.
    return { items: list.map((a) => toHostAttachment(this.id, scope, a)), next: list.length === limit && list.length > 0 ? list[list.length - 1]!.id : null };
  }

  override async updateHostAttachment(ref: VolumeRef, attachmentId: string, connector: Record<string, unknown>, o: CallOptions): Promise<Attachment> {
    const id = uuid(attachmentId, 'input.attachmentId');
    await req.updateAttachment(this.#c, id, connector, o);
    return this.#readHostAttachment(ref.namespace, id, o);
  }

  /** Cinder answers a PUT (and a POST with connector) with the attachment as it was before the
   * update (cinder-21/05), so the current state comes from a show. */
  async #readHostAttachment(scope: string, id: string, o: CallOptions): Promise<Attachment> {
    const { data } = await req.showAttachment(this.#c, id, o);
    return toHostAttachment(this.id, scope, data!.attachment);
  }

  override async completeHostAttachment(_ref: VolumeRef, attachmentId: string, o: CallOptions): Promise<void> {
    await req.completeAttachment(this.#c, uuid(attachmentId, 'input.attachmentId'), o);
  }

  /** A host attachment without connector only reserves the volume (status `reserved`). */
  override async reserveHostAttachment(ref: VolumeRef, o: CallOptions): Promise<Attachment> {
    const { data } = await req.createAttachment(this.#c, { volume_uuid: uuid(ref.nativeId, 'input.volumeId') }, o);
    return toHostAttachment(this.id, ref.namespace, data!.attachment);
  }

  // ---- servers (Nova) -----------------------------------------------------------------------

  override async getServers(scope: string, ids: readonly string[], o: CallOptions): Promise<Map<string, OpenStackServer>> {
    const out = new Map<string, OpenStackServer>();
    const valid = ids.filter((id) => UUID.test(id));
    // From the threshold on, one list-detail page first; shows for whatever it lacks.
    const listed =
      valid.length >= LIST_STRATEGY_THRESHOLD.servers
        ? new Map(((await req.listServersDetail(this.#c, { limit: MAX_LIMIT }, o)).data?.servers ?? []).map((s) => [s.id, s] as const))
        : null;
    await mapLimited(valid, 8, async (id) => {
      const s = listed?.get(id) ?? (await this.#showServer(id, o));
      if (s) out.set(id, toServer(this.id, scope, s));
    });
    return out;
  }

  /** One server, or null when Nova does not know it (404). */
  async #showServer(id: string, o: CallOptions): Promise<NovaServer | null> {
    try {
      const { data } = await req.showServer(this.#c, id, o);
      return data?.server ?? null;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  override async listServers(scope: string, limit: number, token: string | null, o: CallOptions): Promise<OpaquePage<OpenStackServer>> {
    const marker = this.#marker(token);
    const lim = Math.min(limit, MAX_LIMIT);
    const { data } = await req.listServersDetail(this.#c, { limit: lim, marker }, o);
    const list = data?.servers ?? [];
    const next = data?.servers_links?.some((l) => l.rel === 'next') && list.length > 0 ? list[list.length - 1]!.id : null;
    return { items: list.map((s) => toServer(this.id, scope, s)), next };
  }

  override async listServerVolumeAttachments(scope: string, serverId: string, o: CallOptions): Promise<ServerVolumeAttachment[]> {
    const { data } = await req.listServerVolumeAttachments(this.#c, uuid(serverId, 'serverId'), {}, o);
    return (data?.volumeAttachments ?? []).map((a) => toServerVolumeAttachment(this.id, scope, a));
  }

  override async getServerVolumeAttachment(scope: string, serverId: string, volumeId: string, o: CallOptions): Promise<ServerVolumeAttachment | null> {
    const sid = uuid(serverId, 'serverId');
    const vid = uuid(volumeId, 'volumeId');
    // Nova answers within the token's project: that is the scope when the caller names none.
    const project = scope || (await this.#c.session(o)).projectId;
    try {
      const { data } = await req.showServerVolumeAttachment(this.#c, sid, vid, o);
      return data ? toServerVolumeAttachment(this.id, project, data.volumeAttachment) : null;
    } catch (err) {
      // Nova answers 404 both for an unknown server and for a volume not attached to it.
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  override async updateServerVolumeAttachment(_scope: string, serverId: string, volumeId: string, change: { newVolumeId?: string; deleteOnTermination?: boolean }, o: CallOptions): Promise<Accepted<void>> {
    const sid = uuid(serverId, 'input.serverId');
    const vid = uuid(volumeId, 'input.volumeId');
    const body: { volumeId: string; delete_on_termination?: boolean } = { volumeId: change.newVolumeId ? uuid(change.newVolumeId, 'input.newVolumeId') : vid };
    if (change.deleteOnTermination !== undefined) body.delete_on_termination = change.deleteOnTermination;
    if (body.volumeId === vid && body.delete_on_termination === undefined) throw new BadUserInputError('nothing to change: give newVolumeId (swap) or deleteOnTermination', 'input');
    await req.updateServerVolumeAttachment(this.#c, sid, vid, body, o);
    if (body.volumeId === vid) return { result: undefined, pending: null };
    // A swap finishes when Nova lists the new volume on the server.
    const target = body.volumeId;
    return {
      result: undefined,
      pending: {
        timeoutMs: this.#timeoutMs,
        check: async (co) => {
          const { data } = await req.listServerVolumeAttachments(this.#c, sid, {}, co);
          return (data?.volumeAttachments ?? []).some((a) => a.volumeId === target) ? { state: 'SUCCEEDED' } : { state: 'RUNNING' };
        },
      },
    };
  }

  override close(): Promise<void> {
    return this.#c.close();
  }

  // ---- helpers ------------------------------------------------------------------------------

  #marker(token: string | null): string | undefined {
    if (token === null || token === START) return undefined;
    if (!UUID.test(token)) throw new BadUserInputError('the cursor does not name a position in this OpenStack listing', 'after');
    return token;
  }

  async #show(id: string, o: CallOptions): Promise<CinderVolume | null> {
    if (!UUID.test(id)) return null; // Cinder ids are UUIDs: anything else cannot exist
    try {
      const { data } = await req.showVolume(this.#c, id, o);
      return data?.volume ?? null;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  #waitVolume(id: string, judge: (v: CinderVolume | null) => ChangeProgress | Promise<ChangeProgress>): PendingChange {
    return { timeoutMs: this.#timeoutMs, check: async (o) => judge(await this.#show(id, o)) };
  }

  #waitSnapshot(id: string, judge: (s: CinderSnapshot | null) => ChangeProgress): PendingChange {
    return {
      timeoutMs: this.#timeoutMs,
      check: async (o) => {
        try {
          const { data } = await req.showSnapshot(this.#c, id, o);
          return judge(data?.snapshot ?? null);
        } catch (err) {
          if (isStatus(err, 404)) return judge(null);
          throw err;
        }
      },
    };
  }

  #untilGone(id: string, o: CallOptions): PendingChange {
    return this.#waitVolume(id, (v) => (v === null ? { state: 'SUCCEEDED', backendStatus: 'deleted' } : v.status === 'error_deleting' ? this.#failed(v, o) : running(v)));
  }

  /** A volume in an error status: the reason from Cinder's user messages when the cloud has them. */
  async #failed(v: CinderVolume, o: CallOptions): Promise<ChangeProgress> {
    return fail(`Cinder set the volume to ${v.status}${await this.#reason(v.id, o, '')}`, v.status);
  }

  async #reason(volumeId: string, o: CallOptions, fallback: string): Promise<string> {
    try {
      const { data } = await req.listMessages(this.#c, volumeId, o);
      const m = data?.messages?.[0];
      return m ? `: ${m.user_message}` : fallback;
    } catch (err) {
      // Clouds before 3.3 have no messages; a failed read must not hide the failure itself.
      if (err instanceof GatewayError) return fallback;
      throw err;
    }
  }
}

const done = (v: CinderVolume | null): ChangeProgress => ({ state: 'SUCCEEDED', backendStatus: v?.status ?? 'deleted' });
const running = (v: CinderVolume): ChangeProgress => ({ state: 'RUNNING', backendStatus: v.status });
const fail = (reason: string, backendStatus: string | null): ChangeProgress => ({ state: 'FAILED', reason, backendStatus });

function uuid(value: string, argument: string): string {
  if (!UUID.test(value)) throw new BadUserInputError(`${argument} must be an OpenStack UUID (got ${JSON.stringify(value.slice(0, 80))})`, argument);
  return value.toLowerCase();
}

function record(kv: KeyValue[]): Record<string, string> {
  return Object.fromEntries(kv.map((p) => [p.key, p.value]));
}

function pairs(o: Record<string, string> | undefined): KeyValue[] {
  return Object.entries(o ?? {}).map(([key, value]) => ({ key, value: String(value) }));
}

const mapLimited = <T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<Array<R | Error>> =>
  mapWithConcurrency(items, limit, (t) => fn(t).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))));
