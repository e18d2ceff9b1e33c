/**
 * What backend calls take: specs, queries, targets and options, in neutral terms plus each kind's
 * own part ({@link OwnInput}). The core (`backend.ts`) and the facets (`capabilities.ts`) both take them.
 */
import type { KeyValue, VolumeRef } from './model';

/** Filters a backend applies itself (the gateway applies the derived ones, such as status). */
export interface VolumeListQuery {
  /** Namespace/project, or '*' for all the caller may see. */
  namespace: string;
  /** Exact volume name. */
  name?: string;
  /** Only volumes used by consumers on this node (Nomad node id). */
  node?: string;
  /** Most items wanted (the backend may return fewer). */
  limit: number;
  /** Resume token from a previous page's `next` or an item's `position`; null = from the start. */
  token: string | null;
  /**
   * The listing's arguments only some kinds take, as the caller gave them: `{ filter }` (the
   * filter but its neutral fields, e.g. a plugin id); each backend reads its own ({@link OwnInput}).
   * @default none
   */
  own?: OwnInput;
}

/**
 * A kind's own part of an input, as the caller gave it (GraphQL input values, unparsed). The
 * backend parses it with its own typed parser, in its folder. Its input errors name fields
 * relative to the input it was given (`BadUserInputError.atField`): a mutation's input
 * (`nomad.nativeId`, `cascade`) or a query's arguments (`filter.plugin`, `secrets`); the resolver
 * layer places them under the argument (`resolvers/input-fields.ts`).
 */
export type OwnInput = unknown;

/**
 * An os-brick style host connector: how a host reaches block storage. Typed here; the OpenStack
 * adapter writes the wire keys.
 */
export interface HostConnector {
  /** Host name (required by Cinder). */
  host: string;
  ip?: string;
  /** iSCSI initiator IQN. */
  initiator?: string;
  /** Fibre Channel port names. */
  wwpns?: string[];
  /** Fibre Channel node names. */
  wwnns?: string[];
  /** NVMe-oF host NQN. */
  nqn?: string;
  /** e.g. `x86_64`. */
  platform?: string;
  /** e.g. `linux2`. */
  osType?: string;
  multipath?: boolean;
  doLocalAttach?: boolean;
  /** The host's system UUID (NVMe-oF). */
  systemUuid?: string;
}

/** Where to attach a volume. */
export type AttachTarget =
  | {
      kind: 'server';
      /** OpenStack server (attached through Nova, as users do). */
      serverId: string;
      /** Requested device name, e.g. /dev/vdb (the hypervisor may choose another). */
      device?: string;
      /** Device tag. */
      tag?: string;
      /** Delete the volume when the server is deleted. */
      deleteOnTermination?: boolean;
    }
  | {
      kind: 'host';
      /** The host to attach (Cinder attachments API: created and completed at once). */
      connector: HostConnector;
      /** @default false */
      readOnly?: boolean;
    };

/** What to detach a volume from. */
export type DetachTarget =
  | { kind: 'node'; /** Nomad client node. */ nodeId: string }
  | { kind: 'server'; /** OpenStack server (through Nova). */ serverId: string }
  | { kind: 'hostAttachment'; /** A host attachment (Cinder attachments API). */ attachmentId: string };

/**
 * A kind's own part of a create's input (the GraphQL `CreateVolumeInput.<field>`): options only
 * backends of that kind take. The resolvers refuse it for any other backend.
 */
export interface OwnCreateInput {
  /** The input field, e.g. `nomad`. */
  readonly field: string;
  /** The kind as messages name it: "input.<field> is for <owner> backends". */
  readonly owner: string;
  /**
   * Set when every create on this kind must give the part: the message when it is missing, given
   * the part's argument path (e.g. `input.nomad`). @default the part is optional
   */
  readonly required?: (part: string) => string;
  /**
   * Checks the part (and the rest of the spec the kind reads) before anything is done: the domain
   * calls it before it claims an idempotency key, so bad input is refused as such even when the
   * key store is down, and holds no key. Throws the errors the create would, fields relative to
   * the create input. @default no check before the call
   */
  readonly check?: (spec: VolumeSpec, backend: string) => void;
}

/** A kind's own rules on an attach's target (e.g. a device tag's form), beyond the neutral ones. */
export interface OwnAttachInput {
  /**
   * Checks the target before anything is done: the domain calls it before it claims an idempotency
   * key, so bad input is refused as such and reaches no backend. Throws BadUserInputError naming
   * fields relative to the attach input (`target.server.tag`).
   */
  readonly check: (target: AttachTarget) => void;
}

/** A backend-neutral volume specification for create (and Nomad's register). */
export interface VolumeSpec {
  namespace: string;
  /**
   * The id the caller chose, for kinds that take one outside their own part (memory). A kind that
   * takes it in its own part (Nomad: `nomad.nativeId`) reads it there. @default the backend chooses
   */
  nativeId?: string;
  name: string;
  /** At least this many bytes (backends that count in GiB round up). */
  capacityMinBytes?: number;
  /** At most this many bytes. */
  capacityMaxBytes?: number;
  description?: string;
  metadata?: KeyValue[];
  /**
   * The kind's own part: on a create the value of its {@link OwnCreateInput.field} (e.g. the
   * `nomad` part, errors relative to the create input: `nomad.plugin`); on Nomad's register the
   * register input itself. @default none
   */
  own?: OwnInput;
}

/** Options of a volume delete. */
export interface DeleteVolumeOptions {
  /**
   * The delete input's fields but the volume's id, as the caller gave them: each kind reads its
   * own (plugin secrets, a cascade, a forced delete) and refuses the others'. Secrets are never
   * returned or logged. @default none
   */
  own?: OwnInput;
}

/** Identifies a snapshot within the gateway. */
export interface SnapshotRef {
  backend: string;
  /** Nomad: plugin id; OpenStack: project id. */
  scope: string;
  nativeId: string;
}

/** Which snapshots to list. */
export interface SnapshotListQuery {
  /** Only the snapshots of this volume. */
  volume?: VolumeRef;
  limit: number;
  token: string | null;
  /**
   * The listing's arguments only some kinds take, as the caller gave them: `{ filter, secrets }`
   * (the filter but its volume; e.g. a plugin and plugin secrets). Secrets are never returned or
   * logged. @default none
   */
  own?: OwnInput;
}

/** What to snapshot. */
export interface SnapshotSpec {
  volume: VolumeRef;
  name: string;
  description?: string;
  /**
   * The create input's fields but the neutral ones (volume, name, description, idempotency key),
   * as the caller gave them: e.g. a plugin, its parameters and secrets, or a forced snapshot.
   * Secrets are never returned or logged. @default none
   */
  own?: OwnInput;
}

/** Options of a snapshot delete. */
export interface DeleteSnapshotOptions {
  /** The delete input's fields but the snapshot's id, as the caller gave them (e.g. plugin secrets). @default none */
  own?: OwnInput;
}
