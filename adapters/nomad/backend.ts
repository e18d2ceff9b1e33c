/**
 * The `VolumeBackend` for one Nomad cluster, with Nomad's capabilities: registration, CSI plugins
 * and node claims. It calls `requests.ts` and maps with the `results*` modules.
 *
 * Nomad answers every write once the plugin has finished, so no change is left pending. What
 * Nomad cannot do is answered with the reason (`UNSUPPORTED_BY_BACKEND`): attaching (allocations
 * claim volumes when the scheduler places them, backends.md 1.4), detaching from anything but a
 * client node, and extending (see {@link NomadBackend.extendVolume}).
 */
import { BreakerBoard, type Breaker } from '../http/breaker';
import { timedProbe } from '../contract/health';
import type {
  Accepted,
  AttachTarget,
  BackendPage,
  CallOptions,
  DeleteVolumeOptions,
  DetachTarget,
  OpaquePage,
  OwnCreateInput,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeBackend,
  VolumeListQuery,
  VolumeSpec,
} from '../contract/backend';
import { advertise, type CoreCapability, type NodeAttachments, type StoragePlugins, type VolumeReader, type VolumeRegistration } from '../contract/capabilities';
import { mapSettled, mapWithConcurrency } from '../http/concurrency';
import { BadUserInputError, ForbiddenError, NotFoundError, UnauthenticatedError, UnsupportedByBackendError } from '../contract/errors';
import type { Attachment, BackendHealth, ExternalVolume, KeyValue, Plugin, Snapshot, Volume, VolumeRef } from '../contract/model';
import type { TransportOptions } from '../http/transport';
import type { AccessGrant, SubscriberAccess, VolumeWatcher, Watching, WatcherOptions } from '../contract/watch';
import { nomadDetails, type NomadVolumeDetails } from './model';
import { NomadClient } from './client';
import { equalsAll } from './volumes/filter';
// Defines the kind's identifier scheme for the contract's id checks (adapters/contract/ids.ts).
import './ids';
import * as req from './volumes/requests';
import { toExternalVolume, toPlugin, toPluginFromStub, toSnapshot } from './plugins/results';
import { toVolume, toVolumeFromStub, volumePosition } from './volumes/results';
import { NomadWatcher, type NomadWatchTuning } from './watch/watcher';
import { WatchConnection } from './watch/connection';

/** Options of a {@link NomadBackend}: the transport's, the service token and the watcher's tuning. */
export interface NomadBackendOptions extends TransportOptions {
  /**
   * The gateway's own token: watchers only, never callers' requests. Without one there is no
   * watcher (with ACLs off, any value will do: Nomad ignores it). @default none
   */
  token?: string;
  /** The watcher's tuning (`watch-tuning.ts`). @default the defaults documented there */
  watch?: NomadWatchTuning;
  /** Where this backend's breaker (service `nomad`) lives. @default a board of its own with the default settings */
  breakers?: BreakerBoard;
}

/** The core methods Nomad does (it neither attaches nor extends); the facets add the rest. */
const CORE: readonly CoreCapability[] = ['LIST_VOLUMES', 'READ_VOLUME', 'CREATE_VOLUME', 'DELETE_VOLUME', 'DETACH_VOLUME', 'CREATE_SNAPSHOT', 'DELETE_SNAPSHOT', 'LIST_SNAPSHOTS'];

/** Most calls {@link NomadBackend.listNodeAttachments} runs at once (Nomad has no multi-get). */
const CLAIM_READS = 8;

const WHY_NO_ATTACH = 'Nomad volumes are claimed by allocations that the scheduler places; run a job that requests the volume';
const WHY_NODE_ONLY = 'Nomad unpublishes volumes from client nodes only; detach from the node that held the claim';
/** Real Nomad's CSIVolume.Merge (nomad/structs/csi.go at backends.md N1) replaces both on a re-put. */
const WHY_NO_EXTEND =
  'Nomad grows a volume only when its whole specification is created again with a larger capacity, and that replaces ' +
  'the CSI secrets and mount options stored with the volume, which Nomad never returns (secrets are withheld, mount flags ' +
  'redacted); create the volume again with its full specification and a larger capacityMinBytes';

export class NomadBackend implements VolumeBackend, VolumeRegistration, StoragePlugins, NodeAttachments, Watching, SubscriberAccess {
  readonly id: string;
  readonly kind = 'NOMAD';
  // Facets (capabilities.ts): this class implements each one itself.
  readonly registration: VolumeRegistration = this;
  readonly storagePlugins: StoragePlugins = this;
  readonly nodeAttachments: NodeAttachments = this;
  readonly watching: Watching = this;
  readonly subscriberAccess: SubscriberAccess = this;
  readonly capabilities = advertise(this, CORE);
  /**
   * Nomad's ACL is per namespace and no volume field depends on the caller, so one read of the
   * caller's proves what the watcher's view may show it (server/loaders.ts).
   */
  readonly viewServesReads = true;
  readonly createInput: OwnCreateInput = { field: 'nomad', owner: 'Nomad', required: 'a Nomad volume needs input.nomad (its id, plugin and capabilities)' };
  readonly snapshotsPerPlugin = 'Nomad lists snapshots per plugin';
  /** Nomad's anonymous ACL policy may allow reads, so a caller without a token is still asked. */
  readonly requiresCredential = false;
  readonly #client: NomadClient;
  readonly #options: NomadBackendOptions;
  /** Every call to this Nomad goes through it; the watcher reports DEGRADED while it is open. */
  readonly breaker: Breaker;

  constructor(options: NomadBackendOptions) {
    this.id = options.backend;
    this.#options = options;
    this.breaker = (options.breakers ?? new BreakerBoard()).get(options.backend, 'nomad');
    this.#client = new NomadClient({ ...options, breaker: this.breaker });
  }

  health(signal?: AbortSignal): Promise<BackendHealth> {
    return timedProbe(async () => {
      const { data } = await req.leader(this.#client, { credential: {}, signal });
      return data ? { up: true, message: null } : { up: false, message: 'no cluster leader' };
    });
  }

  // ---- volumes ----------------------------------------------------------------------------

  async listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
    // plugin_id with namespace=* returns [] on a real Nomad (backends.md 1.4.1), so across all
    // namespaces the plugin becomes a filter term instead.
    const usePluginParam = q.plugin !== undefined && q.namespace !== '*';
    const filter = equalsAll([
      ['Name', q.name, 'filter.name'],
      ['PluginID', usePluginParam ? undefined : q.plugin, 'filter.plugin'],
    ]);
    if (q.node !== undefined) return this.#listByNode(q, filter, o);
    const { data, meta } = await req.listVolumes(
      this.#client,
      { namespace: q.namespace, pluginId: usePluginParam ? q.plugin : undefined, filter, perPage: q.limit, nextToken: q.token ?? undefined },
      o,
    );
    return { items: (data ?? []).map((w) => ({ item: toVolumeFromStub(this.id, w), position: volumePosition(w) })), next: meta.nextToken };
  }

  /** The node_id path answers in map order (backends.md 1.3), so it is read whole and paged here. */
  async #listByNode(q: VolumeListQuery, filter: string | undefined, o: CallOptions): Promise<BackendPage<Volume>> {
    const { data } = await req.listVolumes(this.#client, { namespace: q.namespace, nodeId: q.node, pluginId: q.namespace !== '*' ? q.plugin : undefined, filter }, o);
    const sorted = (data ?? []).map((w) => ({ w, position: volumePosition(w) })).sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    const from = q.token === null ? sorted : sorted.filter((s) => s.position >= q.token!);
    const page = from.slice(0, q.limit);
    return {
      items: page.map(({ w, position }) => ({ item: toVolumeFromStub(this.id, w), position })),
      next: from[q.limit]?.position ?? null,
    };
  }

  async getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    try {
      const { data } = await req.readVolume(this.#client, ref.nativeId, ref.namespace, o);
      return data ? toVolume(this.id, data) : null;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  /** One read per volume (Nomad has no multi-get), at most `concurrency` at once; failures stay per ref. */
  getVolumes(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>> {
    return mapSettled(refs, concurrency, (ref) => this.getVolume(ref, o));
  }

  /** Creates in the provider and registers, synchronously. An existing id takes Nomad's merge path (backends.md 1.4.4). */
  async createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    const body = req.volumeRequest(spec, 'create');
    await req.create(this.#client, body, o);
    return { result: { backend: this.id, namespace: body.Namespace, nativeId: body.ID }, pending: null };
  }

  async registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef> {
    const body = req.volumeRequest(spec, 'register');
    await req.register(this.#client, body, o);
    return { backend: this.id, namespace: body.Namespace, nativeId: body.ID };
  }

  async deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void> {
    await req.deregister(this.#client, ref.nativeId, ref.namespace, force, o);
  }

  async deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    if (opts.cascade || opts.force) throw new BadUserInputError('cascade and force are OpenStack options; Nomad has no such delete', opts.cascade ? 'input.cascade' : 'input.force');
    await req.deleteVolume(this.#client, ref.nativeId, ref.namespace, req.checkCsiSecrets(opts.secrets, 'input.secrets'), o);
    return { result: undefined, pending: null };
  }

  async attachVolume(_ref: VolumeRef, _target: AttachTarget, _o: CallOptions): Promise<Accepted<Attachment | null>> {
    throw new UnsupportedByBackendError(this.id, 'attaching volumes', WHY_NO_ATTACH);
  }

  /** Unpublishes the claims of stopped allocations on the node; live allocations keep theirs (backends.md 1.4.7). */
  async detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    if (target.kind !== 'node') throw new UnsupportedByBackendError(this.id, target.kind === 'server' ? 'detaching from a server' : 'detaching a host attachment', WHY_NODE_ONLY);
    await req.detach(this.#client, ref.nativeId, ref.namespace, target.nodeId, o);
    return { result: undefined, pending: null };
  }

  /**
   * Refused. Nomad's only way to grow a volume is its merge path: the volume's specification put
   * again (create or register) with a larger minimum. That put replaces the stored secrets and
   * mount options, which reads never return, so doing it here would erase them. A caller who
   * holds the specification can take that path with `createVolume`.
   */
  async extendVolume(_ref: VolumeRef, _newSizeBytes: number, _o: CallOptions): Promise<Accepted<void>> {
    throw new UnsupportedByBackendError(this.id, 'extending volumes', WHY_NO_EXTEND);
  }

  // ---- snapshots --------------------------------------------------------------------------

  /**
   * A plugin's snapshots. With `q.volume`, the plugin defaults to the volume's and the page keeps
   * that volume's snapshots only (one read first; Nomad's list has no such filter, so a page may
   * hold fewer than `limit`).
   */
  async listSnapshots(q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
    const secrets = req.checkCsiSecrets(q.secrets, 'secrets');
    let pluginId = q.pluginId;
    let source: { ref: VolumeRef; remoteId: string } | undefined;
    if (q.volume) {
      const d = await this.#volumeDetails(q.volume, o);
      pluginId ??= d.pluginId ?? undefined;
      // The provider names a volume by its ExternalID, or by the Nomad id when it has none (CSIVolume.RemoteID).
      source = { ref: q.volume, remoteId: d.externalId ?? q.volume.nativeId };
    }
    if (!pluginId) throw new BadUserInputError('Nomad lists snapshots per plugin: name the plugin (pluginId)', 'pluginId');
    const { data } = await req.listSnapshots(this.#client, { pluginId, perPage: q.limit, nextToken: q.token ?? undefined, secrets }, o);
    const wire = (data?.Snapshots ?? []).filter((w) => !source || w.ExternalSourceVolumeID === source.remoteId);
    return { items: wire.map((w) => toSnapshot(this.id, w, { pluginId: pluginId!, sourceVolume: source?.ref })), next: data?.NextToken || null };
  }

  async createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    const body = req.snapshotRequest(spec);
    // Create replies leave PluginID empty (backends.md 1.4.9); read the volume's first, so a
    // failed read never follows a snapshot that was made.
    const pluginId = spec.pluginId ?? (await this.#volumeDetails(spec.volume, o)).pluginId ?? '';
    const { data } = await req.createSnapshot(this.#client, { ...body, PluginID: pluginId || undefined }, spec.volume.namespace, o);
    const made = data?.Snapshots?.[0];
    if (!made) throw new NotFoundError(`backend "${this.id}" reported no snapshot for volume "${spec.volume.nativeId}"`, { backend: this.id });
    return { result: toSnapshot(this.id, made, { pluginId, name: spec.name, sourceVolume: spec.volume }), pending: null };
  }

  /** `ref.scope` is the plugin that holds the snapshot. */
  async deleteSnapshot(ref: SnapshotRef, secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>> {
    await req.deleteSnapshot(this.#client, ref.scope, ref.nativeId, req.checkCsiSecrets(secrets, 'input.secrets'), o);
    return { result: undefined, pending: null };
  }

  async #volumeDetails(ref: VolumeRef, o: CallOptions): Promise<NomadVolumeDetails> {
    const v = await this.getVolume(ref, o);
    const d = v && nomadDetails(v);
    if (!d) throw new NotFoundError(`volume "${ref.nativeId}" not found in namespace "${ref.namespace}" on backend "${this.id}"`, { backend: this.id });
    return d;
  }

  // ---- plugins and provider volumes -------------------------------------------------------

  async listPlugins(o: CallOptions): Promise<Plugin[]> {
    const { data } = await req.listPlugins(this.#client, o);
    return (data ?? []).map((w) => toPluginFromStub(this.id, w));
  }

  async getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null> {
    try {
      const { data } = await req.readPlugin(this.#client, pluginId, o);
      return data ? toPlugin(this.id, data) : null;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  async listExternalVolumes(q: { pluginId: string; namespace: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<ExternalVolume>> {
    const { data } = await req.listExternal(this.#client, { pluginId: q.pluginId, namespace: q.namespace, perPage: q.limit, nextToken: q.token ?? undefined }, o);
    return { items: (data?.Volumes ?? []).map((w) => toExternalVolume(this.id, q.pluginId, w)), next: data?.NextToken || null };
  }

  // ---- node attachments (claims) ------------------------------------------------------------------------

  /**
   * Each node's claims in every namespace the caller may list. Nomad's `node_id` list takes one
   * node, so that is one list call per distinct node; then one read per distinct volume found
   * (the claims are in full reads only), at most `CLAIM_READS` at once. A claim is the
   * node's when its allocation stub names the node; the `node_id` list finds volumes of running
   * or to-be-run allocations, so claims still held by stopped allocations show only when a live
   * allocation on the node uses the same volume. A failed read fails the answer: a node's claims
   * are never silently short.
   */
  async listNodeAttachments(nodeIds: readonly string[], o: CallOptions, readVolumes?: VolumeReader): Promise<Map<string, Attachment[]>> {
    const nodes = [...new Set(nodeIds)];
    const lists = await mapWithConcurrency(nodes, CLAIM_READS, (nodeId) => req.listVolumes(this.#client, { namespace: '*', nodeId }, o));
    const refs = new Map<string, VolumeRef>();
    for (const { data } of lists) for (const w of data ?? []) refs.set(volumePosition(w), { backend: this.id, namespace: w.Namespace, nativeId: w.ID });
    const volumes = await (readVolumes ?? ((r) => this.getVolumes(r, o, CLAIM_READS)))([...refs.values()]);
    const claims = new Map(nodes.map((n) => [n, [] as Attachment[]]));
    for (const v of volumes) {
      if (v instanceof Error) throw v;
      for (const a of v?.attachments ?? []) {
        const nodeId = a.consumer.nodeId ?? null;
        if (nodeId !== null) claims.get(nodeId)?.push(a);
      }
    }
    return claims;
  }

  // ---- the live path (adapters/watch.ts) ---------------------------------------------------

  /** A watcher reading with the service token on connections of its own; none without a token. */
  createWatcher(o: WatcherOptions): VolumeWatcher | { unavailable: string } {
    const token = this.#options.token;
    if (!token) return { unavailable: `backend "${this.id}" has no service token configured (backends[].token); Nomad without ACLs accepts any value` };
    const connection = new WatchConnection({ backend: this.id, baseUrl: this.#options.baseUrl, onCall: this.#options.onCall });
    return new NomadWatcher({ backend: this.id, client: this.#client, connection, token, breakers: [this.breaker] }, o, this.#options.watch);
  }

  /**
   * Reads the change's volume in `scope` with the subscriber's token: csi-read-volume is granted
   * per namespace, so a 200 or a 404 proves the namespace and a 403 denies it. The CSI endpoints
   * answer an unknown token like a lacking policy, so a 403 is followed by `GET
   * /v1/acl/token/self`, which tells them apart: an unknown token throws UnauthenticatedError.
   * No token at all, where the anonymous policy does not cover the namespace, is not allowed.
   */
  async checkAccess(scope: string, volume: VolumeRef, o: CallOptions): Promise<AccessGrant> {
    const deny: AccessGrant = { allowed: false, admin: false };
    try {
      await req.readVolume(this.#client, volume.nativeId, scope, o);
    } catch (err) {
      if (err instanceof NotFoundError) return { allowed: true, admin: false };
      if (!o.credential.token && (err instanceof UnauthenticatedError || err instanceof ForbiddenError)) return deny;
      if (err instanceof ForbiddenError) {
        if (await req.tokenKnown(this.#client, o)) return deny;
        throw new UnauthenticatedError(`the Nomad token is not known to backend "${this.id}" (revoked or expired)`, { backend: this.id, httpStatus: 403 });
      }
      throw err;
    }
    return { allowed: true, admin: false };
  }

  async checkCredential(o: CallOptions): Promise<void> {
    if (!o.credential.token) return;
    if (!(await req.tokenKnown(this.#client, o))) throw new UnauthenticatedError(`the Nomad token is not known to backend "${this.id}" (invalid, revoked or expired)`, { backend: this.id, httpStatus: 403 });
  }

  /** Nomad has no admin-only volume fields: what the namespace's reader may read is the whole volume. */
  redact(volume: Volume, _grant: AccessGrant): Volume {
    return volume;
  }

  async serviceCredential(): Promise<{ token: string } | null> {
    return this.#options.token ? { token: this.#options.token } : null;
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
