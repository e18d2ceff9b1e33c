/**
 * The unified model's Nomad-only parts: the volume details (GraphQL `NomadVolumeDetails`), the
 * allocation consumer and the node entity. Each type is named as its GraphQL type in
 * schema/nomad/, which is how codegen maps the one to the other (codegen.ts).
 */
import { defineCarriedDetails } from '../contract/details';
import type {
  AccessMode,
  AttachmentMode,
  ConsumerBase,
  ExternalVolume,
  HealthCount,
  KeyValue,
  Plugin,
  RequestedCapability,
  Topology,
  Volume,
  VolumeDetails,
  VolumeRef,
} from '../contract/model';

/** What Nomad says of a CSI volume. The list-stub part is always here; `full` needs a read. */
export interface NomadVolumeDetails extends VolumeDetails {
  __typename: 'NomadVolumeDetails';
  /** The volume these details belong to (its full part loads by it). */
  ref: VolumeRef;
  /** The storage provider's id (e.g. an EBS volume id). */
  externalId: string | null;
  pluginId: string | null;
  provider: string | null;
  schedulable: boolean | null;
  /** Mode of the current claims; null when idle. */
  accessMode: AccessMode | null;
  attachmentMode: AttachmentMode | null;
  topologies: Topology[];
  controllerRequired: boolean | null;
  controllers: HealthCount | null;
  nodes: HealthCount | null;
  currentReaders: number;
  currentWriters: number;
  /** Nomad's Raft indexes (kept here, never in the core). */
  createIndex: number | null;
  modifyIndex: number | null;
  /** Null on list stubs. */
  full: NomadVolumeFull | null;
}

/** The part of a Nomad volume only a full read has. */
export interface NomadVolumeFull {
  requestedCapacityMinBytes: number | null;
  requestedCapacityMaxBytes: number | null;
  requestedCapabilities: RequestedCapability[];
  requestedTopologies: { required: Topology[]; preferred: Topology[] } | null;
  providerVersion: string | null;
  /** Flags are redacted by the backend; the gateway never un-redacts. */
  mountOptions: { fsType: string | null; mountFlags: string[] } | null;
  parameters: KeyValue[];
  context: KeyValue[];
  cloneId: string | null;
  snapshotId: string | null;
}

// The write index moves with every write, and the claim counts with the claims (reported per attachment).
defineCarriedDetails('NomadVolumeDetails', ['modifyIndex', 'currentReaders', 'currentWriters']);

/** Whether details are Nomad's. */
export const isNomadDetails = (d: VolumeDetails): d is NomadVolumeDetails => d.__typename === 'NomadVolumeDetails';

/** The Nomad part of a volume this backend mapped; null for another backend's. */
export const nomadDetails = (v: Volume): NomadVolumeDetails | null => (isNomadDetails(v.details) ? v.details : null);

/** A Nomad allocation holding a claim, as the volume read shows it. */
export interface VolumeAllocationConsumer extends ConsumerBase {
  __typename: 'VolumeAllocationConsumer';
  /** Allocations claim. */
  claim: true;
  allocationId: string;
  /** Null when the allocation was garbage-collected while its claim is still held. */
  name: string | null;
  namespace: string | null;
  jobId: string | null;
  jobType: string | null;
  taskGroup: string | null;
  nodeId: string | null;
  nodeName: string | null;
  clientStatus: string | null;
  desiredStatus: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** A Nomad client node referenced by key (an entity a scheduler subgraph may own). */
export interface NomadNode {
  __typename: 'NomadNode';
  /** The Nomad node id. */
  id: string;
}

/** The schema's `StoragePlugin` (schema/nomad/plugin.graphql): a CSI plugin as the contract models one. */
export type StoragePlugin = Plugin;

/** The schema's `NomadExternalVolume`: a volume a plugin's controller lists, as the contract models one. */
export type NomadExternalVolume = ExternalVolume;
