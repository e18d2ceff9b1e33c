/**
 * Nomad volumes in the unified model. A list stub maps to an incomplete volume (`complete:
 * false`, no attachments, `details.full: null`); a full read to a complete one. The status,
 * counts and health come from fields both shapes carry, so a volume looks the same in a list
 * and in a read (docs/nomad.md).
 */
import type { Attachment, AttachmentAccess, Volume, VolumeRef } from '../../contract/model';
import type { NomadVolumeDetails, NomadVolumeFull, VolumeAllocationConsumer } from '../model';
import { accessMode, attachmentMode, bytesOrNull, nanosToIso, nonEmpty, num, topologies } from '../wire/scalars';
import { attachmentState, attachmentStateReason, volumeStatus } from './status';
import { sortedPairs } from '../../contract/key-values';
import type { WireAllocStub, WireVolume, WireVolumeStub } from '../wire/types';

/** The token that resumes a volume listing at this stub: `<namespace>.<id>` (hashicorp/nomad nomad/state/paginator/tokenizer.go `NamespaceIDTokenizer`). */
export const volumePosition = (w: { Namespace: string; ID: string }): string => `${w.Namespace}.${w.ID}`;

function details(
  ref: VolumeRef,
  w: WireVolume | WireVolumeStub,
  readers: number,
  writers: number,
  full: NomadVolumeFull | null,
): NomadVolumeDetails {
  return {
    __typename: 'NomadVolumeDetails',
    ref,
    externalId: nonEmpty(w.ExternalID),
    pluginId: nonEmpty(w.PluginID),
    provider: nonEmpty(w.Provider),
    schedulable: w.Schedulable,
    accessMode: accessMode(w.AccessMode),
    attachmentMode: attachmentMode(w.AttachmentMode),
    topologies: topologies(w.Topologies),
    controllerRequired: w.ControllerRequired,
    controllers: { healthy: w.ControllersHealthy, expected: w.ControllersExpected },
    nodes: { healthy: w.NodesHealthy, expected: w.NodesExpected },
    currentReaders: readers,
    currentWriters: writers,
    createIndex: num(w.CreateIndex),
    modifyIndex: num(w.ModifyIndex),
    full,
  };
}

/**
 * The volume, built as one object literal: spreading a shared part and adding fields after it
 * (`{ ...base, sizeBytes }`) made V8 (Node 20) keep every such object through young-generation
 * GCs until a full one (measured: ten times the scavenge work on a list of 100).
 */
function volumeOf(
  ref: VolumeRef,
  w: WireVolume | WireVolumeStub,
  readers: number,
  writers: number,
  sizeBytes: number | null,
  attachments: Attachment[],
  full: NomadVolumeFull | null,
): Volume<NomadVolumeDetails> {
  return {
    __typename: 'Volume',
    ref,
    name: w.Name,
    status: volumeStatus(readers, writers, w.Schedulable),
    backendStatus: `readers=${readers} writers=${writers} schedulable=${w.Schedulable}`,
    // Register and create never set CreateTime (hashicorp/nomad nomad/csi_endpoint.go): null until Nomad does.
    createdAt: nanosToIso(w.CreateTime),
    updatedAt: nanosToIso(w.ModifyTime),
    sizeBytes,
    complete: full !== null,
    attachments,
    details: details(ref, w, readers, writers, full),
  };
}

const refOf = (backend: string, w: WireVolume | WireVolumeStub): VolumeRef => ({
  backend,
  namespace: w.Namespace,
  nativeId: w.ID,
});

/** List stub → incomplete volume: size, attachments and `details.full` need a read. */
export function toVolumeFromStub(backend: string, w: WireVolumeStub): Volume<NomadVolumeDetails> {
  return volumeOf(refOf(backend, w), w, w.CurrentReaders, w.CurrentWriters, null, [], null);
}

/** Full read → complete volume with its claims as attachments. */
export function toVolume(backend: string, w: WireVolume): Volume<NomadVolumeDetails> {
  const readIds = Object.keys(w.ReadAllocs ?? {});
  const writeIds = Object.keys(w.WriteAllocs ?? {});
  const ref = refOf(backend, w);
  const stubs = new Map((w.Allocations ?? []).map((a) => [a.ID, a]));
  const claim = (id: string, access: AttachmentAccess): Attachment => toAttachment(ref, id, access, stubs.get(id));
  const full: NomadVolumeFull = {
    requestedCapacityMinBytes: bytesOrNull(w.RequestedCapacityMin),
    requestedCapacityMaxBytes: bytesOrNull(w.RequestedCapacityMax),
    requestedCapabilities: (w.RequestedCapabilities ?? []).map((c) => ({
      accessMode: accessMode(c.AccessMode),
      attachmentMode: attachmentMode(c.AttachmentMode),
    })),
    requestedTopologies: w.RequestedTopologies
      ? { required: topologies(w.RequestedTopologies.Required), preferred: topologies(w.RequestedTopologies.Preferred) }
      : null,
    providerVersion: nonEmpty(w.ProviderVersion),
    mountOptions: w.MountOptions
      ? { fsType: nonEmpty(w.MountOptions.FSType), mountFlags: w.MountOptions.MountFlags ?? [] }
      : null,
    parameters: sortedPairs(w.Parameters),
    context: sortedPairs(w.Context),
    cloneId: nonEmpty(w.CloneID),
    snapshotId: nonEmpty(w.SnapshotID),
  };
  const attachments = [
    ...readIds.map((id) => claim(id, 'READ_ONLY')),
    ...writeIds.map((id) => claim(id, 'READ_WRITE')),
  ];
  return volumeOf(ref, w, readIds.length, writeIds.length, bytesOrNull(w.Capacity), attachments, full);
}

/**
 * One claim. Nomad keeps no claim record of its own (no id, no time, no device): the consumer is
 * the allocation, whose stub is absent once it was garbage-collected.
 */
function toAttachment(
  volume: VolumeRef,
  allocationId: string,
  access: AttachmentAccess,
  a: WireAllocStub | undefined,
): Attachment {
  return {
    __typename: 'VolumeAttachment',
    volume,
    consumerId: allocationId,
    state: attachmentState(a),
    backendState: a ? a.ClientStatus : null,
    stateReason: attachmentStateReason(a),
    access,
    consumer: toConsumer(allocationId, a),
    device: null,
    attachedAt: null,
    nativeId: null,
    tag: null,
    deleteOnTermination: null,
  };
}

function toConsumer(allocationId: string, a: WireAllocStub | undefined): VolumeAllocationConsumer {
  return {
    __typename: 'VolumeAllocationConsumer',
    claim: true,
    allocationId,
    name: a?.Name ?? null,
    namespace: a?.Namespace ?? null,
    jobId: a?.JobID ?? null,
    jobType: a?.JobType ?? null,
    taskGroup: a?.TaskGroup ?? null,
    nodeId: a?.NodeID ?? null,
    nodeName: a?.NodeName ?? null,
    clientStatus: a?.ClientStatus ?? null,
    desiredStatus: a?.DesiredStatus ?? null,
    createdAt: nanosToIso(a?.CreateTime),
    updatedAt: nanosToIso(a?.ModifyTime),
  };
}
