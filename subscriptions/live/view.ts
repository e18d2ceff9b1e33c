/**
 * What an event execution resolves: the event as the schema's `VolumeChangeEvent` (its parent
 * object), and the context of an execution served from the watcher's view alone. That context
 * carries no credential and refuses every backend call, with the volume loader primed with the
 * event's (redacted) volume. Only documents whose fields the view serves run in it (event-fields.ts);
 * the others run with their subscribers' credentials (event-reads.ts).
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { OpenProblem } from '../../adapters/contract/diagnosis';
import type { Attachment, AttachmentState, Volume, VolumeStatus } from '../../adapters/contract/model';
import type { GatewayContext } from '../../domain/context';
import { ExecutionLimits } from '../../domain/execution-limits';
import { NotServedInEventsError } from '../../adapters/contract/errors';
import type { ChangeEvent, ChangeType } from '../events';
import type { ContextFactory } from './types';

/**
 * Where an event execution gets a field: from the event's view (`view`), or from a backend read the
 * view lacks (`read`), made with the subscriber's credentials (event-reads.ts).
 */
export type EventFieldSource = 'view' | 'read';

/** The classification of every field with a resolver of its own, by `Type.field` (the resolvers give it: resolvers/event-fields.ts). */
export type EventFieldSources = Readonly<Record<string, EventFieldSource>>;

/** A backend a subscription cannot cover (the schema's `VolumeListOmission`). */
export interface OmissionView {
  backend: VolumeBackend;
  reason: 'NO_CREDENTIAL' | 'FAILED' | 'DEGRADED';
  code: string | null;
  message: string;
}

/** The parent object of `VolumeChangeEvent`. */
export interface EventView {
  type: ChangeType | 'SUBSCRIBED' | 'BACKEND_DROPPED';
  cursor: string;
  observedAt: string;
  volumeId: string | null;
  volume: Volume | null;
  previousStatus: VolumeStatus | null;
  attachment: Attachment | null;
  previousAttachmentState: AttachmentState | null;
  changedFields: string[];
  omittedBackends: OmissionView[];
  /** The doctor's problem, on PROBLEM_* events. */
  problem?: OpenProblem | null;
}

/** Limits of one event execution. */
export interface EventLimits {
  /** Deadline of one event execution, in ms. @default 5000 */
  timeoutMs?: number;
  /** Response-size cap of one event execution, in bytes. @default 1048576 */
  maxBytes?: number;
}

/** The view of a logged change, with the volume as the group's grant may see it. */
export function eventView(e: ChangeEvent, volume: Volume, attachment: Attachment | null): EventView {
  return {
    type: e.type,
    cursor: e.cursor,
    observedAt: e.observedAt,
    volumeId: e.volumeId,
    volume,
    previousStatus: e.previousStatus,
    attachment,
    previousAttachmentState: e.previousAttachmentState,
    changedFields: e.changedFields,
    omittedBackends: [],
    problem: e.problem ?? null,
  };
}

/** The SUBSCRIBED view: where the subscription starts and what it cannot cover. */
export function subscribedView(cursor: string, omittedBackends: OmissionView[]): EventView {
  return {
    type: 'SUBSCRIBED',
    cursor,
    observedAt: new Date().toISOString(),
    volumeId: null,
    volume: null,
    previousStatus: null,
    attachment: null,
    previousAttachmentState: null,
    changedFields: [],
    omittedBackends,
  };
}

/**
 * The BACKEND_DROPPED view: `omission` names the backend that left the subscription and why. Its
 * cursor is the event at which that was found, which the subscriber no longer receives.
 */
export function droppedView(cursor: string, omission: OmissionView): EventView {
  return { ...subscribedView(cursor, [omission]), type: 'BACKEND_DROPPED' };
}

const notServedInEvents = (): NotServedInEventsError => new NotServedInEventsError();

/** The context of one event execution (call `limits.end()` after it). */
export function eventContext(
  createContext: ContextFactory,
  volume: Volume | null,
  l: EventLimits = {},
): GatewayContext {
  const limits = new ExecutionLimits({
    maxBackendCallsPerOperation: 0,
    operationTimeoutMs: l.timeoutMs ?? 5_000,
    maxResponseBytes: l.maxBytes ?? 1_048_576,
  });
  const ctx = createContext({ credentials: new Map(), limits, requestId: null, refuseCalls: notServedInEvents });
  if (volume) ctx.loaders.volume.prime(volume.ref, volume);
  return ctx;
}
