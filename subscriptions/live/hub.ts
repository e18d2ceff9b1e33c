/**
 * The live hub (LiveHub): what graphql-ws's `subscribe` calls. A volumeChanged/attachmentChanged
 * subscription is indexed first (its live events buffered), starts with SUBSCRIBED (cursor: the log
 * head, or `since`; the backends it cannot cover, coverage.ts), replays the log after `since`, then
 * drains the buffer past the last replayed event: no gap and no duplicate between replay and live.
 * The stream's `return()` unindexes it; `close()` ends every stream and stops the watchers.
 *
 * Before that, the start is paid for and checked: a place in the per-address budget (budget.ts),
 * then each concerned backend's check of the subscriber's credential (the access cache's, so a
 * known credential costs nothing; misses are charged to the address). A backend that refuses it
 * is left out (SUBSCRIBED names it, as an HTTP list would: FAILED, UNAUTHENTICATED); none left
 * ends the start with UNAUTHENTICATED. The credentials that proved valid are the per-credential
 * quota's key, so junk tokens for other backends cannot make new keys.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { lacksCredential, type VolumeBackend } from '../../adapters/contract/backend';
import { type CursorExpiredError, ErrorCode, GatewayError, UnauthenticatedError } from '../../adapters/contract/errors';
import type { GatewayContext } from '../../domain/context';
import type { BackendRegistry } from '../../domain/registry';
import { decodeGlobalId } from '../../adapters/contract/ids';
import { compareCursors, decodeCursor, type ChangeEvent, type CursorParts, type EventLog } from '../events';
import type { AccessCache } from './access';
import { Places, type SubscriptionBudget } from './budget';
import type { Feed } from './feed';
import type { EventSubscriber, Fanout } from './fanout';
import { errorResult } from './format';
import { operationStream } from './operation-stream';
import { LIVE_FIELDS, readInterest, readSpec, SpecErrors, type LiveField, type LiveSpec } from './spec';
import { concernedBackends, narrowWatchers, omissions } from './coverage';
import { checkCredentials, credentialsOf, quotaKey, refusedOmission, type Checked } from './start-checks';
import { LiveStream } from './stream';
import { SubscriberIndex } from './subscribers';
import type { LiveHub, LiveResult, OperationVisibility, SubscriberOrigin } from './types';
import { droppedView, subscribedView, type EventFieldSources } from './view';
import { inDeliverySpan } from './tracing';

/** Metrics callbacks of the hub (all optional; prom-client counters and gauges in the server). */
export interface LiveMetrics {
  /** Open subscriptions of a root field changed by `delta` (+1, -1). */
  subscriptions?(field: LiveField, delta: number): void;
  /** A change reached the hub from the log. */
  eventIn?(backend: string): void;
  /** `count` results were handed to subscribers (one event's, counted together). @default count 1 */
  eventOut?(field: LiveField, count?: number): void;
  /** One execution (per group of an event, or per SUBSCRIBED/operation state). */
  execution?(field: LiveField): void;
  /** A subscriber passed its queue bound and was dropped (SLOW_CONSUMER). */
  drop?(field: LiveField): void;
}

/** What the hub is built from (see `createLiveHub`). */
export interface HubParts {
  log: EventLog;
  registry: BackendRegistry;
  feed: Feed;
  access: AccessCache;
  fanout: Fanout;
  /** Reads an operation as its subscriber may see it (`operationUpdated`). */
  visibleOperation: OperationVisibility;
  /** Per-address and per-credential places, and the start checks' rate (shared by every transport). */
  budget: SubscriptionBudget;
  /** Where events get each field with a resolver of its own (the resolvers' classification). */
  eventFields: EventFieldSources;
  /** Most results queued per subscription. */
  maxQueued: number;
  /** Events per replay page. */
  replayPage: number;
  /** Longest a new subscription waits for its watchers' views before SUBSCRIBED goes out, in ms. */
  watcherWaitMs: number;
  metrics: LiveMetrics;
}

interface Sub extends EventSubscriber {
  /** Live events held back while SUBSCRIBED and the replay go out; null once live. */
  buffer: ChangeEvent[] | null;
  /** Once live, where the replay left off until a later event comes (a shared log's listener lags its replay). */
  after: CursorParts | null;
  /** Backends that refused the credential (at the start, or later: BACKEND_DROPPED). */
  readonly dropped: Map<string, UnauthenticatedError>;
  /** Concerned backends whose changes may still come: a credential sent where one is needed, not refused. */
  readonly live: Set<string>;
}

/**
 * What subscribers with the same group key (document, operation name, variables) ask for: read
 * once and shared by all of them while any is open, since thousands often send the same request.
 */
interface Shape extends Pick<EventSubscriber, 'spec' | 'interest' | 'args'> {
  /** Open subscriptions using it. */
  refs: number;
}

export class Hub implements LiveHub {
  readonly #p: HubParts;
  readonly #index = new SubscriberIndex<Sub>();
  readonly #streams = new Set<LiveStream>();
  /** Open volumeChanged/attachmentChanged subscriptions: what a lost log ends. */
  readonly #eventSubs = new Set<Sub>();
  readonly #shapes = new Map<string, Shape>();
  readonly #counts = Object.fromEntries(LIVE_FIELDS.map((f) => [f, 0])) as Record<LiveField, number>;
  readonly #unlisten: () => void;
  #closed = false;

  constructor(p: HubParts) {
    this.#p = p;
    const lost = (err: CursorExpiredError): void => this.#onLost(err);
    this.#unlisten = p.log.listen((e) => this.#onEvent(e), lost);
  }

  /** Subscriptions indexed for events (open volumeChanged + attachmentChanged). */
  get indexed(): number {
    return this.#index.size;
  }

  /** Distinct requests (document, operation name, variables) among the indexed subscriptions. */
  get groups(): number {
    return this.#shapes.size;
  }

  /** Subscribers that may want a backend's changes (the watchers' demand). */
  subscribersFor(backend: string): number {
    return this.#index.countFor(backend);
  }

  counts(): Record<string, number> {
    return Object.fromEntries(LIVE_FIELDS.map((f) => [f, this.#counts[f]]));
  }

  async subscribe(
    args: ExecutionArgs,
    origin?: SubscriberOrigin,
  ): Promise<AsyncGenerator<LiveResult, void, void> | ExecutionResult> {
    if (this.#closed)
      return errorResult(
        new GatewayError(ErrorCode.BackendUnavailable, 'the gateway is shutting down; resume on another instance'),
      );
    const ctx = args.contextValue as GatewayContext;
    const places = new Places();
    let r: LiveStream | ExecutionResult;
    try {
      if (origin) places.take(this.#p.budget.admitAddress(origin.address, origin.bytes));
      r = await this.#start(args, ctx, origin?.address ?? 'local', places);
    } catch (err) {
      places.release();
      if (err instanceof SpecErrors) return { errors: err.errors };
      if (err instanceof GatewayError) return errorResult(err);
      throw err;
    }
    if (!(r instanceof LiveStream)) places.release();
    return r;
  }

  /** The concerned backends' checks of the credential (misses charged to `address`). */
  #check(backends: VolumeBackend[], credential: Sub['credential'], address: string): Promise<Checked> {
    return checkCredentials(backends, credential, this.#p.access, () => this.#p.budget.admitCheck(address));
  }

  /** The start after the address's place: checks, the credential's place, the stream (whose end releases `places`). */
  async #start(
    args: ExecutionArgs,
    ctx: GatewayContext,
    address: string,
    places: Places,
  ): Promise<LiveStream | ExecutionResult> {
    const spec = readSpec(args, this.#p.eventFields);
    const credential = credentialsOf(this.#p.registry, ctx);
    if (spec.field === 'operationUpdated') {
      // Checked for the key only: the operation's own authorization decides what the caller sees.
      let backend: VolumeBackend | undefined;
      try {
        backend = this.#p.registry.find(decodeGlobalId(String(spec.args.id), 'Operation', 'id').backend);
      } catch {
        // A bad id: operationStream refuses it below.
      }
      const checked = await this.#check(backend ? [backend] : [], credential, address);
      places.take(this.#p.budget.admitCredential(quotaKey(checked, credential, address)));
      const opened = this.#open(spec.field);
      const onClose = (): void => {
        opened.close();
        places.release();
      };
      const r = await operationStream(spec, args, ctx, {
        fanout: this.#p.fanout,
        credential,
        visibleOperation: this.#p.visibleOperation,
        maxQueued: this.#p.maxQueued,
        onClose,
        onOverflow: opened.overflow,
      }).catch((err: unknown) => {
        opened.close();
        throw err;
      });
      // A refusal (bad id, unknown or unreadable operation) opened nothing that stays open.
      if (r instanceof LiveStream) this.#streams.add(r);
      else opened.close();
      return r;
    }
    const shape = this.#shapes.get(spec.groupKey) ?? this.#shapeOf(spec, args);
    const since = typeof spec.args.since === 'string' ? spec.args.since : null;
    if (since !== null) decodeCursor(since);
    const concerned = concernedBackends(this.#p.registry, shape.interest);
    const checked = await this.#check(concerned, credential, address);
    const live = new Set(
      concerned.filter((b) => !lacksCredential(b, credential(b.id)) && !checked.refused.has(b.id)).map((b) => b.id),
    );
    // Every backend that could report refused the credential: nothing would ever arrive.
    if (live.size === 0 && checked.refused.size > 0) return errorResult(checked.refused.values().next().value!);
    places.take(this.#p.budget.admitCredential(quotaKey(checked, credential, address)));
    return this.#subscribeEvents(shape, since, credential, {
      dropped: checked.refused,
      live,
      places,
      requestId: ctx.requestId,
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unlisten();
    for (const s of [...this.#streams]) await s.return();
    await this.#p.feed.stop();
  }

  /** Counts an opened subscription; `close` undoes it, once however often it is called. */
  #open(field: LiveField): { close: () => void; overflow: () => void; stream?: LiveStream } {
    this.#counts[field]++;
    this.#p.metrics.subscriptions?.(field, 1);
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        this.#counts[field]--;
        this.#p.metrics.subscriptions?.(field, -1);
      },
      overflow: () => this.#p.metrics.drop?.(field),
    };
  }

  /**
   * A new shape (not yet filed: `#subscribeEvents` files it with its first subscriber).
   * @throws BadUserInputError for an interest that does not check (see `readInterest`)
   */
  #shapeOf(spec: LiveSpec, args: ExecutionArgs): Shape {
    const interest = readInterest(spec, (id, argument) => void this.#p.registry.forArgument(id, argument));
    // Only what events need, not the start's context: its loaders and limits end with the start.
    return {
      spec,
      interest,
      args: { document: args.document, operationName: args.operationName, variableValues: args.variableValues },
      refs: 0,
    };
  }

  async #subscribeEvents(
    shape: Shape,
    since: string | null,
    credential: Sub['credential'],
    begun: Pick<Sub, 'dropped' | 'live'> & { places: Places; requestId: string },
  ): Promise<LiveStream | ExecutionResult> {
    const { spec, interest, args } = shape;
    // Before it is registered (a loss the reader finds ends registered subscriptions): across
    // replicas, a reader whose connection dropped (a failover) may stand in a tail the new primary
    // lost, and says so only at its next read; a start taken before would end with CURSOR_EXPIRED.
    // Part of the watcher wait, not added to it.
    const began = Date.now();
    await this.#p.log.current?.(this.#p.watcherWaitMs);
    const opened = this.#open(spec.field);
    // No closure below names `requestId`: SUBSCRIBED's log line uses it, the subscription does not keep it.
    const { dropped, live, places, requestId } = begun;
    const sub: Sub = {
      interest,
      spec,
      args,
      credential,
      dropped,
      live,
      buffer: [],
      after: null,
      covers: (backend) => !dropped.has(backend),
      refused: (b, e, err) => this.#drop(sub, b, e, err),
      stream: new LiveStream({
        maxQueued: this.#p.maxQueued,
        onOverflow: opened.overflow,
        onClose: () => {
          this.#index.delete(sub);
          this.#eventSubs.delete(sub);
          this.#streams.delete(sub.stream);
          if (--shape.refs === 0 && this.#shapes.get(spec.groupKey) === shape) this.#shapes.delete(spec.groupKey);
          opened.close();
          places.release();
          this.#p.feed.requestDemand();
        },
      }),
    };
    if (shape.refs++ === 0) this.#shapes.set(spec.groupKey, shape);
    this.#index.add(sub);
    this.#eventSubs.add(sub);
    this.#streams.add(sub.stream);
    this.#p.feed.requestDemand();
    const concerned = concernedBackends(this.#p.registry, interest);
    let first: { events: ChangeEvent[]; more: boolean } = { events: [], more: false };
    let start: string;
    let viewless: string[];
    let narrow: Map<string, string>;
    try {
      // SUBSCRIBED promises that every later change reaches the subscriber: a watcher still reading
      // its first view could not keep that, so wait for it (bounded). Events meanwhile are buffered.
      viewless = await this.#p.feed.settled(
        concerned.map((b) => b.id),
        Math.max(0, this.#p.watcherWaitMs - (Date.now() - began)),
      );
      narrow = await narrowWatchers(this.#p.feed, this.#p.access, sub, concerned);
      if (since !== null) first = await this.#p.log.replay({ since, limit: this.#p.replayPage });
      start = since ?? (await this.#p.log.head());
    } catch (err) {
      await sub.stream.return();
      throw err;
    }
    sub.stream.push(
      this.#p.fanout.executeOnce(
        sub,
        subscribedView(start, omissions(this.#p.feed, this.#p.registry, sub, concerned, viewless, narrow)),
        { requestId, credential },
      ),
    );
    void this.#replay(sub, first, start);
    return sub.stream;
  }

  /**
   * A backend refused the subscriber's credential at event `e` (revoked, expired): it leaves the
   * subscription with one BACKEND_DROPPED naming it, the others go on; none left ends it with
   * UNAUTHENTICATED. Later refusals of the same backend (slots already reserved) are nothing.
   */
  #drop(
    sub: Sub,
    b: VolumeBackend,
    e: ChangeEvent,
    err: UnauthenticatedError,
  ): ReturnType<NonNullable<EventSubscriber['refused']>> {
    if (sub.dropped.has(b.id)) return null;
    sub.dropped.set(b.id, err);
    sub.live.delete(b.id);
    if (sub.live.size === 0) return { end: true, last: errorResult(err) };
    return this.#p.fanout.executeOnce(sub, droppedView(e.cursor, refusedOmission(b, err)), {
      credential: sub.credential,
    });
  }

  /** Replays the pages after the first, then drains the live buffer past the last replayed event. */
  async #replay(sub: Sub, page: { events: ChangeEvent[]; more: boolean }, start: string): Promise<void> {
    let last = start;
    // deliver reserves the stream's slots in order now; what the slots wait on never rejects, and
    // only a delivery span waits for it: not awaited here.
    for (;;) {
      for (const e of page.events) if (!e.viewOnly) void this.#p.fanout.deliver(e, [sub]);
      last = page.events.at(-1)?.cursor ?? last;
      if (!page.more || sub.stream.closed) break;
      try {
        page = await this.#p.log.replay({ since: last, limit: this.#p.replayPage });
      } catch (err) {
        sub.stream.end(err instanceof GatewayError ? errorResult(err) : undefined);
        return;
      }
    }
    const buffered = sub.buffer ?? [];
    sub.buffer = null;
    sub.after = decodeCursor(last);
    for (const e of buffered) if (!e.viewOnly && this.#past(sub, e)) void this.#p.fanout.deliver(e, [sub]);
  }

  /** Whether `e` comes after what `sub` replayed (then every later one does: the log calls listeners in order). */
  #past(sub: Sub, e: ChangeEvent): boolean {
    if (sub.after === null) return true;
    if (compareCursors(decodeCursor(e.cursor), sub.after) <= 0) return false;
    sub.after = null;
    return true;
  }

  /** The log lost events its listener was not told of: the subscriptions end with CURSOR_EXPIRED, never with a gap. */
  #onLost(err: CursorExpiredError): void {
    for (const s of [...this.#eventSubs]) s.stream.end(errorResult(err));
  }

  #onEvent(e: ChangeEvent): void {
    if (e.viewOnly) return;
    this.#p.metrics.eventIn?.(e.backend);
    const live: Sub[] = [];
    for (const s of this.#index.candidates(e)) {
      if (s.buffer) s.buffer.push(e);
      else if (this.#past(s, e)) live.push(s);
    }
    if (live.length > 0) inDeliverySpan(e, live.length, () => this.#p.fanout.deliver(e, live));
  }
}
