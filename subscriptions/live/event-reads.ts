/**
 * The backend reads of subscription events whose documents need more than the watcher's view
 * (event-fields.ts). Each such execution runs with its subscriber's own credentials; the
 * executions of one event (a logged change, or an operation's new state) with the same credentials
 * share one execution context's loaders, so each distinct read is made once per event, and one
 * read budget (event-read-budget.ts). The volume loader is primed with the event's volume as the
 * subscriber's grant sees it: what the view has is never read again.
 */
import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import type { CallerCredential } from '../../adapters/contract/call-options';
import type { BackendHealth, Volume } from '../../adapters/contract/model';
import { asError } from '../../adapters/http/concurrency';
import type { GatewayContext } from '../../domain/context';
import { ExecutionLimits } from '../../domain/execution-limits';
import type { BackendRegistry } from '../../domain/registry';
import { tokenHash } from './access';
import { CredentialReadBudget, EventReadCount, type EventReadHooks, type EventReadLimits } from './event-read-budget';
import { EventLoaders, EventReadCache } from './event-loaders';
import type { ContextFactory } from './types';
import type { EventLimits } from './view';

/** A subscriber's credentials, as the reads of an event share them: equal `key`, equal credentials. */
export interface Reader {
  /** A hash of every backend's credential (token hashes only). */
  key: string;
  credentials: ReadonlyMap<string, CallerCredential>;
}

/** By the subscriber's credential function: one per subscription, made once for its life. */
const readers = new WeakMap<(backend: string) => CallerCredential, Reader>();

/** The reader of a subscriber whose credential for each backend `credential` answers. */
export function readerOf(registry: BackendRegistry, credential: (backend: string) => CallerCredential): Reader {
  let r = readers.get(credential);
  if (r) return r;
  const credentials = new Map<string, CallerCredential>();
  const h = createHash('sha256');
  for (const b of registry.all) {
    const c = credential(b.id);
    credentials.set(b.id, c);
    h.update(`${b.id}\0${tokenHash(c)}\0`);
  }
  readers.set(credential, (r = { key: h.digest('base64url'), credentials }));
  return r;
}

/** What {@link EventReadPool} builds each event's reads with. */
export interface EventReadsOptions {
  /** Builds the execution context each credential's reads go through. */
  createContext: ContextFactory;
  registry: BackendRegistry;
  limits: EventReadLimits;
  /** Deadline (also of the reads) and response cap of one execution. */
  eventLimits?: EventLimits;
  hooks?: EventReadHooks;
}

interface Shared {
  ctx: GatewayContext;
  loaders: EventLoaders;
}

/** The reads of one event. */
export class EventReads {
  /** Holders (executions, deliveries); the reads end when the last lets go. */
  users = 0;
  readonly #count: EventReadCount;
  readonly #byReader = new Map<string, Shared>();
  #health: DataLoader<string, BackendHealth> | undefined;

  constructor(
    readonly key: string,
    private readonly o: EventReadsOptions,
    private readonly cache: EventReadCache,
  ) {
    this.#count = new EventReadCount(o.limits.perEvent, o.hooks ?? {});
  }

  /**
   * One execution's context: its own limits (deadline, response meter); the loaders and the read
   * budget of every execution of this event with `reader`'s credentials.
   * @param volume the event's volume as the subscriber's grant sees it (primed), if any
   */
  context(reader: Reader, volume: Volume | null): GatewayContext {
    const shared = this.#shared(reader);
    if (volume) shared.loaders.volume.prime(volume.ref, volume);
    return { ...shared.ctx, loaders: shared.loaders, limits: this.#limits() };
  }

  /** Ends the reads' deadlines (their results are delivered). */
  end(): void {
    for (const s of this.#byReader.values()) s.ctx.limits.end();
    this.#byReader.clear();
  }

  #limits(budget?: CredentialReadBudget): ExecutionLimits {
    const l = this.o.eventLimits ?? {};
    return new ExecutionLimits(
      {
        maxBackendCallsPerOperation: 0,
        operationTimeoutMs: l.timeoutMs ?? 5_000,
        maxResponseBytes: l.maxBytes ?? 1_048_576,
      },
      undefined,
      budget,
    );
  }

  #shared(reader: Reader): Shared {
    let s = this.#byReader.get(reader.key);
    if (s) return s;
    const budget = new CredentialReadBudget(this.o.limits.perCredential, this.#count);
    const ctx = this.o.createContext({
      credentials: reader.credentials,
      limits: this.#limits(budget),
      requestId: null,
    });
    s = { ctx, loaders: new EventLoaders(ctx.loaders, reader.credentials, this.cache, () => this.#eventHealth()) };
    this.#byReader.set(reader.key, s);
    return s;
  }

  /** One probe per backend for the whole event: the gateway's own, no credential, counted against the event's reads. */
  #eventHealth(): DataLoader<string, BackendHealth> {
    const registry = this.o.registry;
    return (this.#health ??= new DataLoader((ids) =>
      Promise.all(
        ids.map(async (id) => {
          try {
            this.#count.take();
            return await registry.forId(id).health();
          } catch (err) {
            return asError(err);
          }
        }),
      ),
    ));
  }
}

/**
 * The reads of the events being executed now, by event: executions of the same event (across
 * deliveries, and the subscribers of one operation) find the same reads while any holds them.
 */
export class EventReadPool {
  readonly #open = new Map<string, EventReads>();
  readonly #cache: EventReadCache;

  constructor(private readonly o: EventReadsOptions) {
    this.#cache = new EventReadCache(o.limits.cacheTtlMs, o.limits.cacheMaxEntries, o.hooks);
  }

  /** The reads of event `key`, held until {@link release}. */
  acquire(key: string): EventReads {
    let r = this.#open.get(key);
    if (!r) this.#open.set(key, (r = new EventReads(key, this.o, this.#cache)));
    r.users++;
    return r;
  }

  release(r: EventReads): void {
    if (--r.users > 0) return;
    r.end();
    if (this.#open.get(r.key) === r) this.#open.delete(r.key);
  }
}
