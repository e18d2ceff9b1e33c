/**
 * Fan-out of one logged change to the subscribers the index found: exact filter → access (cached;
 * a miss is checked asynchronously while the subscriber's slot for this event holds its place, so
 * each subscriber still receives its events in log order) → group by (document, operation name,
 * variables, admin) → execute ONCE per group with graphql-js on the subscription document, the
 * event as the root field's value → serialize once → the same `SerializedResult` to every member.
 * Backend and scope are the event's, so they are part of every group by construction. A document
 * that needs backend reads beyond the view (spec.ts `reads`) is grouped by credential too and
 * executed with the members' own credentials, through reads shared per event (event-reads.ts).
 */
import { execute, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { lacksCredential, type VolumeBackend } from '../../adapters/contract/backend';
import type { CallerCredential } from '../../adapters/contract/call-options';
import { UnauthenticatedError } from '../../adapters/contract/errors';
import type { AccessGrant } from '../../adapters/contract/watch';
import type { GatewayContext } from '../../domain/context';
import type { BackendRegistry } from '../../domain/registry';
import type { ChangeEvent } from '../events';
import { redactFor, tokenHash, type AccessAnswer, type AccessCache } from './access';
import { errorResult, internalResult, serialize } from './format';
import type { LiveSpec } from './spec';
import type { LiveStream, Slot, SlotValue } from './stream';
import { matches, type Indexed } from './subscribers';
import type { ContextFactory, SerializedResult } from './types';
import { eventContext, eventView, type EventLimits, type EventView } from './view';
import { EVENT_READ_DEFAULTS, type EventReadHooks, type EventReadLimits } from './event-read-budget';
import { EventReadPool, readerOf, type EventReads } from './event-reads';

/** A volumeChanged/attachmentChanged subscription as fan-out sees it. */
export interface EventSubscriber extends Indexed {
  readonly spec: LiveSpec;
  /** The document, operation name and raw variables it subscribed with. */
  readonly args: Pick<ExecutionArgs, 'document' | 'operationName' | 'variableValues'>;
  /** The subscriber's own credential for a backend (from connection_init); one function for the subscription's life. */
  readonly credential: (backend: string) => CallerCredential;
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
  /** The backend reads of events whose documents need them; unset fields take {@link EVENT_READ_DEFAULTS}. */
  eventReads?: Partial<EventReadLimits>;
  /** Told of each such read, refusal and cache hit (metrics). */
  onEventRead?: EventReadHooks;
  /** Called once per execution (one per group of an event). */
  onExecute?: (field: string) => void;
  /** Called with the number of results handed to subscribers (once per event and field, not per subscriber). */
  onDeliver?: (field: string, count: number) => void;
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

/** One event's executions, by request (document, operation name, variables) and access scope, and the results handed out per field. */
interface Groups {
  plain: Map<string, Promise<SerializedResult>>;
  admin: Map<string, Promise<SerializedResult>>;
  delivered: Map<string, number>;
  /** The event's backend reads, held while the delivery runs, when a member's document needs any. */
  reads?: EventReads;
}

/** What {@link Fanout.executeOnce} executes with, besides the document and the view. */
export interface OnceOptions {
  /** The event's volume, primed in the volume loader. @default none */
  volume?: EventView['volume'];
  /** The subscriber's request id, for the log, when the execution is for one subscriber. */
  requestId?: string;
  /**
   * The subscriber's credentials, for a document that needs backend reads (without them it is
   * served from the view alone). @default none
   */
  credential?: EventSubscriber['credential'];
  /** Names the event, so that the executions of its subscribers share their reads. @default none: reads of its own */
  event?: string;
}

/** Slots that fill together (parallel arrays: no object per subscriber). */
interface Members {
  subscribers: EventSubscriber[];
  slots: Slot[];
}

function join<K>(m: Map<K, Members>, key: K, s: EventSubscriber, slot: Slot): void {
  let members = m.get(key);
  if (!members) m.set(key, (members = { subscribers: [], slots: [] }));
  members.subscribers.push(s);
  members.slots.push(slot);
}

/** Fills each execution's slots, in one loop, once it is done; answers the executions. */
function settleWhenDone(executions: Map<Promise<SlotValue>, Members>): Array<Promise<SlotValue>> {
  const out: Array<Promise<SlotValue>> = [];
  for (const [execution, m] of executions) {
    out.push(execution);
    execution.then(
      (value) => settleAll(m, value),
      // Producers settle with values; a rejection here is a bug, so the slots are skipped.
      () => settleAll(m, null),
    );
  }
  return out;
}

function settleAll(m: Members, value: SlotValue): void {
  for (let i = 0; i < m.subscribers.length; i++) m.subscribers[i]!.stream.settle(m.slots[i]!, value);
}

export class Fanout {
  readonly #o: FanoutOptions;
  readonly #reads: EventReadPool;
  /** Executions of one subscriber with reads of their own (no event to share them with). */
  #unshared = 0;

  constructor(o: FanoutOptions) {
    this.#o = o;
    this.#reads = new EventReadPool({
      createContext: o.createContext,
      registry: o.registry,
      limits: { ...EVENT_READ_DEFAULTS, ...o.eventReads },
      eventLimits: o.eventLimits,
      hooks: o.onEventRead,
    });
  }

  /**
   * Executes a subscription document once on `view` (SUBSCRIBED, operation states) and serializes
   * it: with the subscriber's credentials when its document needs backend reads and `o` gives
   * them, else from the view alone.
   */
  async executeOnce(
    s: Pick<EventSubscriber, 'spec' | 'args'>,
    view: unknown,
    o: OnceOptions = {},
  ): Promise<SerializedResult> {
    if (!s.spec.reads || !o.credential)
      return this.#execute(
        s,
        view,
        eventContext(this.#o.createContext, o.volume ?? null, this.#o.eventLimits),
        o.requestId,
      );
    const reads = this.#reads.acquire(o.event ?? `once\0${++this.#unshared}`);
    try {
      const ctx = reads.context(readerOf(this.#o.registry, o.credential), o.volume ?? null);
      return await this.#execute(s, view, ctx, o.requestId);
    } finally {
      this.#reads.release(reads);
    }
  }

  async #execute(
    s: Pick<EventSubscriber, 'spec' | 'args'>,
    view: unknown,
    ctx: GatewayContext,
    requestId?: string,
  ): Promise<SerializedResult> {
    const field = s.spec.field;
    const onUnexpected = this.#o.onUnexpected;
    try {
      this.#o.onExecute?.(field);
      const r = await execute({
        schema: this.#o.schema,
        document: s.args.document,
        operationName: s.args.operationName,
        variableValues: s.args.variableValues,
        rootValue: { [field]: view },
        contextValue: ctx,
      });
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
   * for `e`; the slot fills once access is known and the group's execution is done. Slots waiting
   * on the same thing (one access check, one group's execution) fill together in one loop when it
   * is done, which writes to the sockets right there: one callback per group, not one promise per
   * subscriber.
   * @returns what the slots wait on (the delivery's span ends once it settled)
   */
  deliver(e: ChangeEvent, subscribers: Iterable<EventSubscriber>): Array<Promise<unknown>> {
    const waits: Array<Promise<unknown>> = [];
    const backend = this.#o.registry.all.find((b) => b.id === e.backend);
    if (!backend) return waits;
    const groups: Groups = { plain: new Map(), admin: new Map(), delivered: new Map() };
    const executions = new Map<Promise<SlotValue>, Members>();
    const checks = new Map<Promise<AccessAnswer>, Members>();
    // One answer per token for this event: the cache's key is built once, not per subscriber.
    const answers = new Map<string, AccessAnswer | Promise<AccessAnswer>>();
    for (const s of subscribers) {
      if (s.stream.closed || !matches(s.interest, e)) continue;
      const credential = s.credential(e.backend);
      // No credential where the backend needs one (SUBSCRIBED named it, NO_CREDENTIAL), or one the
      // backend refused (SUBSCRIBED or BACKEND_DROPPED named it): the subscription goes on without its changes.
      if (lacksCredential(backend, credential) || s.covers?.(e.backend) === false) continue;
      const token = tokenHash(credential);
      let answer = answers.get(token);
      if (answer === undefined)
        answers.set(token, (answer = this.#o.access.get(backend, e.scope, e.volume.ref, credential)));
      const slot = s.stream.reserve();
      if (!slot) continue;
      if (s.spec.reads) groups.reads ??= this.#reads.acquire(`event\0${e.cursor}`);
      if (answer instanceof Promise) join(checks, answer, s, slot);
      else this.#fill(backend, e, s, slot, answer, groups, executions);
    }
    for (const [check, m] of checks) {
      waits.push(
        check.then(
          (answer) => {
            const after = new Map<Promise<SlotValue>, Members>();
            for (let i = 0; i < m.subscribers.length; i++) {
              try {
                this.#fill(backend, e, m.subscribers[i]!, m.slots[i]!, answer, groups, after);
              } catch (err) {
                // One subscriber's failure skips its slot only: the others' streams go on.
                this.#o.onUnexpected?.(err, { field: m.subscribers[i]!.spec.field });
                m.subscribers[i]!.stream.settle(m.slots[i]!, null);
              }
            }
            this.#counted(groups);
            return Promise.allSettled(settleWhenDone(after));
          },
          // Checks settle with answers; a rejection here is a bug, so the slots are skipped.
          () => settleAll(m, null),
        ),
      );
    }
    this.#counted(groups);
    waits.push(...settleWhenDone(executions));
    // The reads live until every execution of this delivery is done (access checks included), so
    // that its budget and loaders are the event's, whenever each execution starts.
    const reads = groups.reads;
    if (reads) void Promise.allSettled(waits).then(() => this.#reads.release(reads));
    return waits;
  }

  /** Fills `s`'s slot for `e` now, or joins it to the execution it waits on. */
  #fill(
    b: VolumeBackend,
    e: ChangeEvent,
    s: EventSubscriber,
    slot: Slot,
    a: AccessAnswer,
    groups: Groups,
    executions: Map<Promise<SlotValue>, Members>,
  ): void {
    const value = this.#slot(b, e, s, a, groups);
    if (value instanceof Promise) join(executions, value, s, slot);
    else s.stream.settle(slot, value);
  }

  #slot(
    b: VolumeBackend,
    e: ChangeEvent,
    s: EventSubscriber,
    a: AccessAnswer,
    groups: Groups,
  ): SlotValue | Promise<SlotValue> {
    if (a instanceof UnauthenticatedError) return s.refused ? s.refused(b, e, a) : { end: true, last: errorResult(a) };
    if (!a.allowed) return null;
    // Keyed by the request's own key (a string made once per request): no key built per subscriber.
    const byKey = a.admin ? groups.admin : groups.plain;
    // A document that reads is executed per credential: the members of a group read alike.
    const key = s.spec.reads ? `${s.spec.groupKey}\0${readerOf(this.#o.registry, s.credential).key}` : s.spec.groupKey;
    let result = byKey.get(key);
    if (!result) byKey.set(key, (result = this.#executeEvent(b, e, s, a, groups.reads)));
    groups.delivered.set(s.spec.field, (groups.delivered.get(s.spec.field) ?? 0) + 1);
    return result;
  }

  /** Reports the results handed out so far, per field, and starts counting again. */
  #counted(groups: Groups): void {
    for (const [field, n] of groups.delivered) this.#o.onDeliver?.(field, n);
    groups.delivered.clear();
  }

  #executeEvent(
    b: VolumeBackend,
    e: ChangeEvent,
    s: EventSubscriber,
    grant: AccessGrant,
    reads: EventReads | undefined,
  ): Promise<SerializedResult> {
    const volume = redactFor(b, e.volume, grant);
    // The attachment is redacted as part of its volume (a host's name is admin-only on Cinder).
    const attachment = e.attachment
      ? (redactFor(b, { ...e.volume, attachments: [e.attachment] }, grant).attachments[0] ?? null)
      : null;
    const view = eventView(e, volume, attachment);
    // A problem's volume may be the view's stub (a compute attachment to a volume the view lacks):
    // its problem reads it, with the subscriber's credential.
    const primed = e.problem ? null : volume;
    const ctx =
      s.spec.reads && reads
        ? reads.context(readerOf(this.#o.registry, s.credential), primed)
        : eventContext(this.#o.createContext, primed, this.#o.eventLimits);
    return this.#execute(s, view, ctx);
  }
}
