/**
 * `VolumeBackend` for one Nomad cluster: calls `requests.ts`, maps with `results.ts`.
 * Attach and extend are not offered: Nomad has no HTTP endpoint for claims (allocations claim
 * volumes when the scheduler places them, backends.md 1.4), and expansion needs the volume's
 * secrets, which Nomad never returns.
 */
import { BaseBackend, type Accepted, type BackendPage, type CallOptions, type DeleteVolumeOptions, type DetachTarget, type OpaquePage, type SnapshotSpec, type VolumeListQuery, type VolumeSpec } from '../backend';
import { BadUserInputError, NotFoundError } from '../errors';
import type { BackendHealth, Capability, ExternalVolume, KeyValue, Plugin, Snapshot, Topology, Volume, VolumeRef } from '../model';
import type { TransportOptions } from '../transport';
import { NomadClient } from './client';
import { equalsAll } from './filter';
import * as req from './requests';
import {
  NOMAD_ACCESS_MODE,
  NOMAD_ATTACHMENT_MODE,
  toExternalVolume,
  toPlugin,
  toPluginFromStub,
  toSnapshot,
  toVolume,
  toVolumeFromStub,
  volumePosition,
} from './results';

const CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'LIST_VOLUMES',
  'READ_VOLUME',
  'REGISTER_VOLUME',
  'DEREGISTER_VOLUME',
  'CREATE_VOLUME',
  'DELETE_VOLUME',
  'DETACH_VOLUME',
  'LIST_EXTERNAL_VOLUMES',
  'CREATE_SNAPSHOT',
  'DELETE_SNAPSHOT',
  'LIST_SNAPSHOTS',
  'LIST_PLUGINS',
]);

const record = (kvs: KeyValue[] | undefined): Record<string, string> | undefined =>
  kvs && kvs.length > 0 ? Object.fromEntries(kvs.map((kv) => [kv.key, kv.value])) : undefined;
const segments = (ts: Topology[] | undefined) => (ts && ts.length > 0 ? ts.map((t) => ({ Segments: record(t.segments) ?? {} })) : null);

// Secrets stored with a volume are later merged with header ones: one rule for both.
const checkSecrets = req.checkCsiSecrets;

export class NomadBackend extends BaseBackend {
  readonly id: string;
  readonly kind = 'NOMAD' as const;
  readonly capabilities = CAPABILITIES;
  readonly #client: NomadClient;

  constructor(options: TransportOptions) {
    super();
    this.id = options.backend;
    this.#client = new NomadClient(options);
  }

  async health(signal?: AbortSignal): Promise<BackendHealth> {
    const started = performance.now();
    const checkedAt = new Date().toISOString();
    try {
      const { data } = await req.leader(this.#client, { credential: {}, signal });
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      return data ? { status: 'UP', latencyMs, message: null, checkedAt } : { status: 'DOWN', latencyMs, message: 'no cluster leader', checkedAt };
    } catch (err) {
      return { status: 'DOWN', latencyMs: null, message: (err as Error).message, checkedAt };
    }
  }

  override async listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
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

  override async getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
    try {
      const { data } = await req.readVolume(this.#client, ref.nativeId, ref.namespace, o);
      return data ? toVolume(this.id, data) : null;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  #volumeRequest(spec: VolumeSpec): req.VolumeRequest {
    if (!spec.nativeId) throw new BadUserInputError('Nomad volumes need an id chosen by the caller (input.nativeId)', 'input.nativeId');
    if (!spec.pluginId) throw new BadUserInputError('Nomad volumes need a plugin (input.pluginId)', 'input.pluginId');
    if (spec.capabilities.length === 0) throw new BadUserInputError('at least one capability is required', 'input.capabilities');
    return {
      ID: spec.nativeId,
      Name: spec.name,
      Namespace: spec.namespace,
      PluginID: spec.pluginId,
      ExternalID: spec.externalId,
      RequestedCapacityMin: spec.capacityMinBytes,
      RequestedCapacityMax: spec.capacityMaxBytes,
      RequestedCapabilities: spec.capabilities.map((c) => ({ AccessMode: NOMAD_ACCESS_MODE[c.accessMode], AttachmentMode: NOMAD_ATTACHMENT_MODE[c.attachmentMode] })),
      MountOptions: spec.mountOptions ? { FSType: spec.mountOptions.fsType ?? '', MountFlags: spec.mountOptions.mountFlags ?? [] } : undefined,
      Secrets: record(checkSecrets(spec.secrets, 'input.secrets')),
      Parameters: record(spec.parameters),
      Context: record(spec.context),
      RequestedTopologies:
        spec.requiredTopologies || spec.preferredTopologies
          ? { Required: segments(spec.requiredTopologies), Preferred: segments(spec.preferredTopologies) }
          : undefined,
      SnapshotID: spec.snapshotId,
      CloneID: spec.cloneId,
    };
  }

  override async registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef> {
    const body = this.#volumeRequest(spec);
    if (!body.ExternalID) throw new BadUserInputError('registering needs the provider volume id (input.externalId)', 'input.externalId');
    await req.register(this.#client, body, o);
    return { backend: this.id, namespace: body.Namespace, nativeId: body.ID };
  }

  // Nomad answers create, delete, detach and snapshot calls once the plugin has finished: no pending work.
  override async createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
    if (spec.capabilities.length === 0) throw new BadUserInputError('Nomad volumes need at least one access/attachment mode (input.capabilities)', 'input.capabilities');
    if (spec.sizeGiB !== undefined || spec.volumeType !== undefined || spec.availabilityZone !== undefined) {
      throw new BadUserInputError('sizeGiB, volumeType and availabilityZone are OpenStack options; Nomad takes capacityMinBytes/capacityMaxBytes and parameters', 'input');
    }
    const body = this.#volumeRequest(spec);
    await req.create(this.#client, body, o);
    return { result: { backend: this.id, namespace: body.Namespace, nativeId: body.ID }, pending: null };
  }

  override async deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void> {
    await req.deregister(this.#client, ref.nativeId, ref.namespace, force, o);
  }

  override async deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>> {
    if (opts.cascade || opts.force) throw new BadUserInputError('cascade and force are OpenStack options; Nomad has no such delete', opts.cascade ? 'input.cascade' : 'input.force');
    await req.deleteVolume(this.#client, ref.nativeId, ref.namespace, checkSecrets(opts.secrets, 'input.secrets'), o);
    return { result: undefined, pending: null };
  }

  override async detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>> {
    if (!target.nodeId) throw new BadUserInputError('detaching on Nomad needs the client node (input.nodeId)', 'input.nodeId');
    await req.detach(this.#client, ref.nativeId, ref.namespace, target.nodeId, o);
    return { result: undefined, pending: null };
  }

  override async listExternalVolumes(pluginId: string, namespace: string, limit: number, token: string | null, o: CallOptions): Promise<OpaquePage<ExternalVolume>> {
    const { data } = await req.listExternal(this.#client, { pluginId, namespace, perPage: limit, nextToken: token ?? undefined }, o);
    return { items: (data?.Volumes ?? []).map((w) => toExternalVolume(this.id, pluginId, w)), next: data?.NextToken || null };
  }

  override async createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
    const { data } = await req.createSnapshot(
      this.#client,
      { SourceVolumeID: spec.volume.nativeId, PluginID: spec.pluginId, Name: spec.name, Secrets: record(checkSecrets(spec.secrets, 'input.secrets')), Parameters: record(spec.parameters) },
      spec.volume.namespace,
      o,
    );
    const made = data?.Snapshots?.[0];
    if (!made) throw new NotFoundError(`backend "${this.id}" reported no snapshot for volume "${spec.volume.nativeId}"`, { backend: this.id });
    // Create replies leave PluginID empty (backends.md 1.4.9): fall back to the volume's plugin.
    const pluginId = spec.pluginId ?? (await this.getVolume(spec.volume, o))?.pluginId ?? '';
    return { result: toSnapshot(this.id, made, { pluginId, name: spec.name }), pending: null };
  }

  override async deleteSnapshot(pluginId: string, snapshotId: string, secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>> {
    await req.deleteSnapshot(this.#client, pluginId, snapshotId, checkSecrets(secrets, 'input.secrets'), o);
    return { result: undefined, pending: null };
  }

  override async listSnapshots(pluginId: string, limit: number, token: string | null, secrets: KeyValue[], o: CallOptions): Promise<OpaquePage<Snapshot>> {
    const { data } = await req.listSnapshots(this.#client, { pluginId, perPage: limit, nextToken: token ?? undefined, secrets: checkSecrets(secrets, 'secrets') }, o);
    return { items: (data?.Snapshots ?? []).map((w) => toSnapshot(this.id, w, { pluginId })), next: data?.NextToken || null };
  }

  override async listPlugins(o: CallOptions): Promise<Plugin[]> {
    const { data } = await req.listPlugins(this.#client, o);
    return (data ?? []).map((w) => toPluginFromStub(this.id, w));
  }

  override async getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null> {
    try {
      const { data } = await req.readPlugin(this.#client, pluginId, o);
      return data ? toPlugin(this.id, data) : null;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  override close(): Promise<void> {
    return this.#client.close();
  }
}
