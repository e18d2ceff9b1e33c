/**
 * The `diagnosis` facet (docs/doctor.md): a backend's checks for volumes that are stuck, in error,
 * or seen differently by two of its services, each with typed evidence and the remedies a person
 * may apply, ordered from safest to riskiest. The gateway runs them on the watcher's view (the
 * doctor, subscriptions/doctor/); it never applies a remedy itself.
 *
 * A check is a pure function of one volume, the facts of the last pass (the few extra reads a
 * check needs, made once per pass with the service credential) and the doctor's context. So a
 * watcher's delta re-checks only the volumes it names, and a full pass is one loop.
 */
import type { CallOptions } from './call-options';
import type { Attachment, Volume, VolumeRef, VolumeStatus } from './model';

/** The problem kinds, in the schema's order (`VolumeProblemKind`). */
export const PROBLEM_KINDS = [
  'STUCK_CLAIM',
  'CLAIM_ON_MISSING_PLUGIN',
  'STUCK_TRANSITION',
  'ERROR_STATE',
  'ATTACHMENT_DRIFT',
] as const;

/** What is wrong, by kind (each kind's condition, threshold and sources: docs/doctor.md). */
export type ProblemKind = (typeof PROBLEM_KINDS)[number];

/**
 * WARNING: past its threshold, may still resolve by itself. CRITICAL: blocks a workload, or needs a
 * person.
 */
export type ProblemSeverity = 'WARNING' | 'CRITICAL';

/** A claim (attachment held by a consumer) whose consumer is finished or gone. */
export interface ClaimEvidence {
  __typename: 'VolumeClaimEvidence';
  /** The claim as the view holds it; its consumer carries the consumer's own fields. */
  attachment: Attachment;
  /** False when the backend no longer knows the consumer (garbage-collected). */
  consumerFound: boolean;
  /** The consumer's own status (a Nomad allocation's client status); null when gone. */
  consumerStatus: string | null;
  /** What the scheduler wants of it (a Nomad allocation's desired status); null when gone. */
  consumerDesiredStatus: string | null;
  /** The client node the claim is on; null when unknown. */
  nodeId: string | null;
}

/** The storage plugin a volume needs, and how healthy it is where it is needed. */
export interface PluginEvidence {
  __typename: 'VolumePluginEvidence';
  pluginId: string | null;
  /** The node whose plugin instance the claim needs; null for a controller problem. */
  nodeId: string | null;
  /** Whether that node's plugin instance is healthy; null when the plugin does not list the node. */
  nodePluginHealthy: boolean | null;
  /** Whether the volume needs a controller to publish and unpublish. */
  controllerRequired: boolean;
  controllersHealthy: number | null;
  controllersExpected: number | null;
  nodesHealthy: number | null;
  nodesExpected: number | null;
  /** The claim that cannot be released; null for a controller problem. */
  attachment: Attachment | null;
}

/** Where a status's "since" comes from when the backend records no transition time. */
export type SinceSource =
  /** The backend's own record of the transition. */
  | 'BACKEND_TRANSITION'
  /**
   * The earlier of the backend's last-write time (which any write moves, metadata included) and the
   * moment the gateway first saw the volume in this status: the transition began at or before it,
   * so the age is never overstated.
   */
  | 'LAST_WRITE_OR_FIRST_SEEN';

/** A volume's status, with how long it has held it. */
export interface StatusEvidence {
  __typename: 'VolumeStatusEvidence';
  status: VolumeStatus;
  /** The backend's own status word (`detaching`, `error_extending`). */
  backendStatus: string;
  /** The backend's last-write time (Cinder's `updated_at`). */
  updatedAt: string | null;
  /** Since when the volume has held the status, at the latest (see `sinceSource`). */
  since: string;
  sinceSource: SinceSource;
  /** The threshold applied, in ms (size-scaled states included); null for error states. */
  thresholdMs: number | null;
}

/**
 * Whether the compute service knows a server. A service user that is not an admin cannot tell a
 * server in another project from a deleted one: NOT_VISIBLE says so.
 */
export type ServerPresence = 'LISTED' | 'OTHER_PROJECT' | 'DELETED' | 'NOT_VISIBLE';

/** One service's side of an attachment. */
export interface DriftSide {
  attachmentId: string | null;
  state: string | null;
  device: string | null;
  attachedAt: string | null;
}

/** The compute service's and the volume service's view of one attachment, side by side. */
export interface DriftEvidence {
  __typename: 'VolumeAttachmentDriftEvidence';
  /** Only the id when the server is in another project than the volume's reader may see. */
  serverId: string;
  server: ServerPresence;
  /** What the compute service lists (its block device mapping); null when it lists none. */
  computeSide: DriftSide | null;
  /** What the volume service holds; null when it holds none. */
  volumeSide: DriftSide | null;
}

export type ProblemEvidence = ClaimEvidence | PluginEvidence | StatusEvidence | DriftEvidence;

/** Who may apply a remedy. */
export type RemedyActor =
  /** Anyone who may change the volume. */
  | 'VOLUME_WRITER'
  /** An admin of the backend (admin-only actions). */
  | 'ADMIN'
  /** An operator with access to the backend's own tools or hosts. */
  | 'OPERATOR'
  /** Nobody: the backend resolves it by itself (waiting is the remedy). */
  | 'NOBODY';

/** A gateway mutation ready to send. */
export interface RemedyMutation {
  /** The GraphQL document. */
  document: string;
  /** Its variables, as JSON. */
  variables: Record<string, unknown>;
}

/** One remedy of a problem. */
export interface Remedy {
  /** Short and stable, for programs (`WAIT_FOR_CLAIM_GC`, `RESET_STATUS`). */
  action: string;
  /** What it does. */
  does: string;
  /** What it risks; "nothing" where nothing. */
  risk: string;
  /** The gateway mutation that applies it; null when the remedy is the backend's own. */
  mutation: RemedyMutation | null;
  /** The backend's own command line for it; null when there is none. */
  cli: string | null;
  who: RemedyActor;
}

/** What a check finds about one volume. */
export interface Finding {
  kind: ProblemKind;
  severity: ProblemSeverity;
  volume: VolumeRef;
  /**
   * What within the volume the problem is about, so two problems of one kind stay apart (a
   * claim's consumer id, a server id, the status word). Stable while the problem lasts.
   */
  subject: string;
  /** When it started, by the backend's own clock where it has one; null when unknown. */
  startedAt: string | null;
  /** One sentence. */
  summary: string;
  evidence: ProblemEvidence;
  /** From safest to riskiest. */
  remedies: Remedy[];
}

/** A problem the doctor holds open: a check's finding, with where and since when the gateway saw it. */
export interface OpenProblem extends Finding {
  /** Global id (kind `Problem`): the same condition keeps the same id. */
  id: string;
  backend: string;
  /** The volume's namespace or project. */
  scope: string;
  /** When the gateway first saw it (RFC 3339). */
  seenAt: string;
}

/** What the doctor tells every check. */
export interface DiagnosisContext {
  /** The pass's clock, ms since epoch. */
  now: number;
  /**
   * Whether one of the gateway's own tracked operations is changing the volume and still inside its
   * deadline: a transition it drives is never a problem.
   */
  operationRunning(ref: VolumeRef): boolean;
  /**
   * When the doctor first saw a condition on the volume, in ms since epoch (`now` the first time it
   * is asked). `condition` is the check's own name for it: a status word (`detaching`), a drift's
   * side and server (`drift:<server>`). Kept while the check keeps asking in every pass; forgotten
   * after a pass that did not ask, so a condition that ends and comes back starts again. Where the
   * backend has no time of its own for a condition, this is its age (a grace period counts from it).
   */
  firstSeen(ref: VolumeRef, condition: string): number;
  /**
   * When the facts the checks get began to be read, on the same clock as `now`: between passes the
   * watcher's changes are checked against the last pass's facts, up to an interval old, so a check
   * comparing the view with its facts judges only what the facts are recent enough to show.
   * @default `now` (facts as recent as the check)
   */
  factsReadAt?: number;
}

/** The `diagnosis` facet. `F` is the facts one pass reads (nothing: `null`). */
export interface Diagnosis<F = unknown> {
  /** The kinds these checks can find. */
  readonly kinds: readonly ProblemKind[];
  /**
   * The extra reads of one pass with the service credential, at most one listing (all its pages) per
   * check that needs one. Absent when the checks need only the view.
   */
  readFacts?(o: CallOptions): Promise<F>;
  /** One volume's findings from the view and the last facts (null before the first read). Pure. */
  checkVolume(volume: Volume, facts: F | null, ctx: DiagnosisContext): Finding[];
  /**
   * Findings the facts show about volumes the view lacks (a compute attachment to a volume the
   * volume service no longer has). Pure.
   */
  checkFacts?(facts: F, inView: (ref: VolumeRef) => boolean, ctx: DiagnosisContext): Finding[];
}
