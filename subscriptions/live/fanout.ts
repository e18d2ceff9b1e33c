/**
 * Fan-out of one logged change to the subscribers the index found: exact filter → access (cached;
 * a miss is checked asynchronously while the subscriber's slot for this event holds its place, so
 * each subscriber still receives its events in log order) → group by (document, operation name,
 * variables, admin) → execute ONCE per group with graphql-js on the subscription document, the
 * event as the root field's value → serialize once → the same `SerializedResult` to every member.
 * Backend and scope are the event's, so they are part of every group by construction.
 */
import { execute, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { lacksCredential, type CallerCredential, type VolumeBackend } from '../../adapters/contract/backend';
import { UnauthenticatedError } from '../../adapters/contract/errors';
import type { AccessGrant } from '../../adapters/contract/watch';
import type { BackendRegistry } from '../../domain/registry';
import type { ChangeEvent } from '../events';
import { redactFor, type AccessAnswer, type AccessCache } from './access';
import { errorResult, internalResult, serialize } from './format';
import type { LiveSpec } from './spec';
import type { LiveStream, SlotValue } from './stream';
import { matches, type Indexed } from './subscribers';
import type { ContextFactory, SerializedResult } from './types';
import { eventContext, eventView, type EventLimits, type EventView } from './view';

/** A volumeChanged/attachmentChanged subscription as fan-out sees it. */
export interface EventSubscriber extends Indexed {
  readonly spec: LiveSpec;
  /** The document, operation name and raw variables it subscribed with. */
  readonly args: Pick<ExecutionArgs, 'document' | 'operationName' | 'variableValues'>;
  /** The subscriber's own credential for a backend (from connection_init). */
  credential(backend: string): CallerCredential;
  readonly stream: LiveStream;
  /** False once `backend` left the subscription (its credential was refused): its changes pass it by. @default true */
  covers?(backend: string): boolean;
  /**
   * The backend refused the subscriber's credential at event `e`: what the subscriber's slot for `e`
   * becomes (BACKEND_DROPPED, or the end when no backend is left).
   * @default the end, with UNAUTHENTICATED
   */
  refused?(b: VolumeBackend, e: ChangeEvent, err: UnauthenticatedError): SlotValue | Promise<SlotValue>;
}

/** Options of {@link Fanout}. */
export interface FanoutOptions {
  schema: GraphQLSchema;
  /** Builds each event execution's context. */
  createContext: ContextFactory;
  registry: BackendRegistry;
  access: AccessCache;
  eventLimits?: EventLimits;
  /** Called once per execution (one per group of an event). */
  onExecute?: (field: string) => void;
  /** Called per result handed to a subscriber. */
  onDeliver?: (field: string) => void;
  /** Unexpected errors while executing (logged by the server), with the subscriber's request id when one subscriber's execution it was. */
  onUnexpected?: (err: unknown, where: UnexpectedWhere) => void;
}

/** What the log says of an unexpected error in an execution. */
export interface UnexpectedWhere {
  field: string;
  /** The subscriber's request id, for an execution of its own (SUBSCRIBED, operation states); none for a shared event execution. */
  requestId?: string;
  path?: ReadonlyArray<string | number>;
}

export class Fanout {
  readonly #o: FanoutOptions;

  constructor(o: FanoutOptions) {
    this.#o = o;
  }

  /**
   * Executes a subscription document once on `view` (SUBSCRIBED, operation states) and serializes it.
   * @param requestId the subscriber's, for the log, when the execution is for one subscriber
   */
  async executeOnce(s: Pick<EventSubscriber, 'spec' | 'args'>, view: unknown, volume: EventView['volume'] = null, requestId?: string): Promise<SerializedResult> {
    const ctx = eventContext(this.#o.createContext, volume, this.#o.eventLimits);
    const field = s.spec.field;
    const onUnexpected = this.#o.onUnexpected;
    try {
      this.#o.onExecute?.(field);
      const r = await execute({ schema: this.#o.schema, document: s.args.document, operationName: s.args.operationName, variableValues: s.args.variableValues, rootValue: { [field]: view }, contextValue: ctx });
      return serialize(r, onUnexpected && ((err, path) => onUnexpected(err, { field, requestId, path })));
    } catch (err) {
      onUnexpected?.(err, { field, requestId });
      return internalResult();
    } finally {
      ctx.limits.end();
    }
  }

  /**
   * Reserves, synchronously and in the order given, a slot of each matching subscriber's stream
   * for `e`; the slot fills once access is known and the group's execution is done.
   * @returns the slots (the delivery's span ends once they settled)
   */
  deliver(e: ChangeEvent, subscribers: Iterable<EventSubscriber>): Array<SlotValue | Promise<SlotValue>> {
    const slots: Array<SlotValue | Promise<SlotValue>> = [];
    const backend = this.#o.registry.all.find((b) => b.id === e.backend);
    if (!backend) return slots;
    const groups = new Map<string, Promise<SerializedResult>>();
    for (const s of subscribers) {
      if (s.stream.closed || !matches(s.interest, e)) continue;
      const credential = s.credential(e.backend);
      // No credential where the backend needs one (SUBSCRIBED named it, NO_CREDENTIAL), or one the
      // backend refused (SUBSCRIBED or BACKEND_DROPPED named it): the subscription goes on without its changes.
      if (lacksCredential(backend, credential) || s.covers?.(e.backend) === false) continue;
      const answer = this.#o.access.get(backend, e.scope, e.volume.ref, credential);
      const slot = answer instanceof Promise ? answer.then((a) => this.#slot(backend, e, s, a, groups)) : this.#slot(backend, e, s, answer, groups);
      slots.push(slot);
      s.stream.push(slot);
    }
    return slots;
  }

  #slot(b: VolumeBackend, e: ChangeEvent, s: EventSubscriber, a: AccessAnswer, groups: Map<string, Promise<SerializedResult>>): SlotValue | Promise<SlotValue> {
    if (a instanceof UnauthenticatedError) return s.refused ? s.refused(b, e, a) : { end: true, last: errorResult(a) };
    if (!a.allowed) return null;
    const key = `${s.spec.groupKey}\0${a.admin ? 'admin' : ''}`;
    let result = groups.get(key);
    if (!result) groups.set(key, (result = this.#executeEvent(b, e, s, a)));
    this.#o.onDeliver?.(s.spec.field);
    return result;
  }

  #executeEvent(b: VolumeBackend, e: ChangeEvent, s: EventSubscriber, grant: AccessGrant): Promise<SerializedResult> {
    const volume = redactFor(b, e.volume, grant);
    // The attachment is redacted as part of its volume (a host's name is admin-only on Cinder).
    const attachment = e.attachment ? (redactFor(b, { ...e.volume, attachments: [e.attachment] }, grant).attachments[0] ?? null) : null;
    return this.executeOnce(s, eventView(e, volume, attachment), volume);
  }
}
