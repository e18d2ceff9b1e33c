/**
 * The Nomad backend's volume methods: list, read, batch read, create, register, deregister,
 * delete and detach, over `requests.ts` and mapped by `results.ts`.
 *
 * Nomad answers every write once the plugin has finished, except the frees a detach leaves to its
 * volume watcher: a detach whose claims are still listed when it answered is left pending
 * (`completion/rules.ts`). What Nomad cannot do is answered with the reason
 * (`UNSUPPORTED_BY_BACKEND`): attaching (allocations claim volumes when the scheduler places them;
 * Nomad's HTTP API has no claim endpoint), detaching from anything but a client node, and
 * extending (see {@link extendVolume}).
 */
import type { Accepted, BackendPage } from '../../contract/call-answers';
import type {
  AttachTarget,
  DeleteVolumeOptions,
  DetachTarget,
  VolumeListQuery,
  VolumeSpec,
} from '../../contract/call-inputs';
import type { CallOptions } from '../../contract/call-options';
import type { PendingChange } from '../../contract/completion';
import { GatewayError, NotFoundError, UnsupportedByBackendError } from '../../contract/errors';
import type { Attachment, Volume, VolumeRef } from '../../contract/model';
import { mapSettled } from '../../http/concurrency';
import { evaluate, rules } from '../completion/rules';
import { orNull, type NomadContext } from '../context';
import { nomadDetails, type NomadVolumeDetails } from '../model';
import { equalsAll } from './filter';
import { deleteSecrets, listPlugin, nomadVolume } from './input';
import * as req from './requests';
import { toVolume, toVolumeFromStub, volumePosition } from './results';

const WHY_NO_ATTACH =
  'Nomad volumes are claimed by allocations that the scheduler places; run a job that requests the volume';
const WHY_NODE_ONLY = 'Nomad unpublishes volumes from client nodes only; detach from the node that held the claim';
/** Real Nomad's CSIVolume.Merge (hashicorp/nomad nomad/structs/csi.go) replaces both on a re-put. */
const WHY_NO_EXTEND =
  'Nomad grows a volume only when its whole specification is created again with a larger capacity, and that replaces ' +
  'the CSI secrets and mount options stored with the volume, which Nomad never returns (secrets are withheld, mount flags ' +
  'redacted); create the volume again with its full specification and a larger capacityMinBytes';

/** `listVolumes` of the Nomad backend: one page of list stubs, by the Nomad list path the query picks. */
export async function volumePage(ctx: NomadContext, q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
  // plugin_id with namespace=* returns [] on a real Nomad (its state store drops every volume whose
  // namespace is not "*": hashicorp/nomad nomad/csi_endpoint.go `List`), so across all
  // namespaces the plugin becomes a filter term instead.
  const plugin = listPlugin(q);
  const usePluginParam = plugin !== undefined && q.namespace !== '*';
  const filter = equalsAll([
    ['Name', q.name, 'filter.name'],
    ['PluginID', usePluginParam ? undefined : plugin, 'filter.plugin'],
  ]);
  if (q.node !== undefined) return listByNode(ctx, q, plugin, filter, o);
  const { data, meta } = await req.listVolumeStubs(
    ctx.client,
    {
      namespace: q.namespace,
      pluginId: usePluginParam ? plugin : undefined,
      filter,
      perPage: q.limit,
      nextToken: q.token ?? undefined,
    },
    o,
  );
  return {
    items: (data ?? []).map((w) => ({ item: toVolumeFromStub(ctx.backend, w), position: volumePosition(w) })),
    next: meta.nextToken,
  };
}

/** The node_id path answers in map order (hashicorp/nomad nomad/csi_endpoint.go `List`), so it is read whole and paged here. */
async function listByNode(
  ctx: NomadContext,
  q: VolumeListQuery,
  plugin: string | undefined,
  filter: string | undefined,
  o: CallOptions,
): Promise<BackendPage<Volume>> {
  const { data } = await req.listVolumeStubs(
    ctx.client,
    { namespace: q.namespace, nodeId: q.node, pluginId: q.namespace !== '*' ? plugin : undefined, filter },
    o,
  );
  const sorted = (data ?? [])
    .map((w) => ({ w, position: volumePosition(w) }))
    .sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  const from = q.token === null ? sorted : sorted.filter((s) => s.position >= q.token!);
  const page = from.slice(0, q.limit);
  return {
    items: page.map(({ w, position }) => ({ item: toVolumeFromStub(ctx.backend, w), position })),
    next: from[q.limit]?.position ?? null,
  };
}

export async function getVolume(ctx: NomadContext, ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
  const read = await orNull(req.readVolume(ctx.client, ref.nativeId, ref.namespace, o));
  return read?.data ? toVolume(ctx.backend, read.data) : null;
}

/** One read per volume (Nomad has no multi-get), at most `concurrency` at once; failures stay per ref. */
export function getVolumes(
  ctx: NomadContext,
  refs: readonly VolumeRef[],
  o: CallOptions,
  concurrency: number,
): Promise<Array<Volume | null | Error>> {
  return mapSettled(refs, concurrency, (ref) => getVolume(ctx, ref, o));
}

/** The volume's Nomad details, read; NotFoundError when there is no such volume. */
export async function volumeDetails(ctx: NomadContext, ref: VolumeRef, o: CallOptions): Promise<NomadVolumeDetails> {
  const v = await getVolume(ctx, ref, o);
  const d = v && nomadDetails(v);
  if (!d)
    throw new NotFoundError(
      `volume "${ref.nativeId}" not found in namespace "${ref.namespace}" on backend "${ctx.backend}"`,
      { backend: ctx.backend },
    );
  return d;
}

/** Creates in the provider and registers, synchronously. An existing id takes Nomad's merge path (hashicorp/nomad nomad/csi_endpoint.go `Create`). */
export async function createVolume(ctx: NomadContext, spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
  const body = req.volumeRequest(nomadVolume(spec, 'create'));
  await req.create(ctx.client, body, o);
  return { result: { backend: ctx.backend, namespace: body.Namespace, nativeId: body.ID }, pending: null };
}

export async function registerVolume(ctx: NomadContext, spec: VolumeSpec, o: CallOptions): Promise<VolumeRef> {
  const body = req.volumeRequest(nomadVolume(spec, 'register'));
  await req.register(ctx.client, body, o);
  return { backend: ctx.backend, namespace: body.Namespace, nativeId: body.ID };
}

export async function deregisterVolume(
  ctx: NomadContext,
  ref: VolumeRef,
  force: boolean,
  o: CallOptions,
): Promise<void> {
  await req.deregister(ctx.client, ref.nativeId, ref.namespace, force, o);
}

export async function deleteVolume(
  ctx: NomadContext,
  ref: VolumeRef,
  opts: DeleteVolumeOptions,
  o: CallOptions,
): Promise<Accepted<void>> {
  await req.deleteVolume(ctx.client, ref.nativeId, ref.namespace, deleteSecrets(opts), o);
  return { result: undefined, pending: null };
}

export async function attachVolume(
  ctx: NomadContext,
  _ref: VolumeRef,
  _target: AttachTarget,
  _o: CallOptions,
): Promise<Accepted<Attachment | null>> {
  throw new UnsupportedByBackendError(ctx.backend, 'attaching volumes', WHY_NO_ATTACH);
}

/**
 * Unpublishes the claims of stopped allocations on the node; live allocations keep theirs
 * (hashicorp/nomad nomad/csi_endpoint.go `Unpublish`). Nomad's volume watcher frees them after the
 * answer, so one read then says whether that is still to come: pending `claimsFreed`, started.
 */
export async function detachVolume(
  ctx: NomadContext,
  ref: VolumeRef,
  target: DetachTarget,
  o: CallOptions,
): Promise<Accepted<void>> {
  if (target.kind !== 'node')
    throw new UnsupportedByBackendError(
      ctx.backend,
      target.kind === 'server' ? 'detaching from a server' : 'detaching a host attachment',
      WHY_NODE_ONLY,
    );
  await req.detach(ctx.client, ref.nativeId, ref.namespace, target.nodeId, o);
  return { result: undefined, pending: await detachLeft(ctx, ref, target.nodeId, o) };
}

/**
 * What is left of a detach once Nomad answered, from one read: null when the volume lists none of
 * the claims it released (the volume watcher was quicker than the answer's trip, the common case),
 * else the rule with the claims to wait for. A read that fails transiently leaves the rule to the
 * tracker's checks; one that fails for good (a 500, the token revoked meanwhile: detaching needs
 * `csi-mount-volume`, which reads too) leaves the detach as Nomad answered it, done: the tracker
 * could only fail a change that went through.
 */
async function detachLeft(
  ctx: NomadContext,
  ref: VolumeRef,
  nodeId: string,
  o: CallOptions,
): Promise<PendingChange | null> {
  const rule = rules.claimsFreed(ref, nodeId);
  let volume: Volume | null;
  try {
    volume = await getVolume(ctx, ref, o);
  } catch (err) {
    return err instanceof GatewayError && err.retryable ? { rule } : null;
  }
  const { progress, seen } = evaluate(rule, volume);
  if (progress.state !== 'RUNNING') return null;
  return { rule: { ...rule, seen }, started: { backendStatus: progress.backendStatus ?? null } };
}

/**
 * Refused. Nomad's only way to grow a volume is its merge path: the volume's specification put
 * again (create or register) with a larger minimum. That put replaces the stored secrets and
 * mount options, which reads never return, so doing it here would erase them. A caller who
 * holds the specification can take that path with `createVolume`.
 */
export async function extendVolume(
  ctx: NomadContext,
  _ref: VolumeRef,
  _newSizeBytes: number,
  _o: CallOptions,
): Promise<Accepted<void>> {
  throw new UnsupportedByBackendError(ctx.backend, 'extending volumes', WHY_NO_EXTEND);
}
