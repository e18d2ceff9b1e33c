/**
 * Live-hub test setup with real parts: simulators on loopback, a registry from
 * server/backends.ts, the real schema, a MemoryEventLog and the hub driven through
 * `hub.subscribe(args)` as graphql-ws would. Until the backends' own watchers land, a backend is
 * made watchable by `pollWatcher`: it reads the backend with a service token (list + full reads,
 * the backend's own HTTP calls) and reports what changed between reads.
 */
import { execute, parse } from 'graphql';
import type { CallerCredential, VolumeBackend } from '../../adapters/backend';
import { hasTrackedChanges } from '../../adapters/capabilities';
import type { Volume, VolumeRef } from '../../adapters/model';
import type { VolumeDelta, VolumeWatcher, WatchDemand, WatcherOptions, WatcherStatus } from '../../adapters/watch';
import { createRegistry } from '../../server/backends';
import type { NomadBackendConfig, OpenStackBackendConfig } from '../../server/config';
import { createExecutionContext, type GatewayServices } from '../../server/context';
import { MemoryIdempotencyStore } from '../../server/idempotency';
import { buildGatewaySchema } from '../../server/schema';
import { MemoryEventLog, type MemoryEventLogOptions } from '../../subscriptions/events';
import { createLiveHub, SerializedResult, type LiveHubOptions, type LiveResult, type RunningLiveHub } from '../../subscriptions/live';
import { OperationTracker } from '../../subscriptions/operations';

const key = (r: VolumeRef): string => `${r.backend}\0${r.namespace}\0${r.nativeId}`;

/** A watcher that re-reads the whole backend every `intervalMs` with `token` and reports differences. */
class PollWatcher implements VolumeWatcher {
  readonly #view = new Map<string, Volume>();
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #current = false;
  #currentAt: number | null = null;
  constructor(
    readonly backendImpl: VolumeBackend,
    readonly credential: CallerCredential,
    readonly o: WatcherOptions,
    readonly intervalMs: number,
  ) {}
  get backend(): string {
    return this.backendImpl.id;
  }
  get current(): boolean {
    return this.#current;
  }
  start(): void {
    void this.#round();
  }
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }
  status(): WatcherStatus {
    return { backend: this.backend, state: this.#stopped ? 'STOPPED' : 'POLLING', source: 'POLLING', volumes: this.#view.size, currentAt: this.#currentAt, lagMs: this.#currentAt === null ? null : Date.now() - this.#currentAt, message: null };
  }
  volume(ref: VolumeRef): Volume | undefined {
    return this.#view.get(key(ref));
  }
  setDemand(_d: WatchDemand): void {}
  nudge(): void {}
  async #round(): Promise<void> {
    if (this.#stopped) return;
    try {
      const o = { credential: this.credential };
      const refs: VolumeRef[] = [];
      let token: string | null = null;
      do {
        const page = await this.backendImpl.listVolumes({ namespace: '*', limit: 100, token }, o);
        refs.push(...page.items.map((i) => i.item.ref));
        token = page.next;
      } while (token);
      const now = new Map<string, Volume>();
      for (const r of refs) {
        const v = await this.backendImpl.getVolume(r, o);
        if (v) now.set(key(r), v);
      }
      const deltas: VolumeDelta[] = [];
      const at = new Date().toISOString();
      for (const [k, v] of now) {
        const before = this.#view.get(k) ?? null;
        if (!before || JSON.stringify(before) !== JSON.stringify(v)) deltas.push({ before, after: v, observedAt: at });
      }
      for (const [k, v] of this.#view) if (!now.has(k)) deltas.push({ before: v, after: null, observedAt: at });
      this.#view.clear();
      for (const [k, v] of now) this.#view.set(k, v);
      this.#current = true;
      this.#currentAt = Date.now();
      if (deltas.length > 0 && !this.#stopped) this.o.onDeltas(deltas);
    } catch (err) {
      this.o.onStatus?.(this.status(), err);
    }
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#round(), this.intervalMs);
  }
}

/** Gives a real backend a polling watcher reading with `token`. */
export function pollWatcher(b: VolumeBackend, token: string, intervalMs = 40): void {
  Object.assign(b, { createWatcher: (o: WatcherOptions) => new PollWatcher(b, { token }, o, intervalMs) });
}

export type BackendConfig = ({ id: string; url: string } & Partial<NomadBackendConfig>) | OpenStackBackendConfig;

export interface LiveUnderTest {
  hub: RunningLiveHub;
  services: GatewayServices;
  log: MemoryEventLog;
  backend(id: string): VolumeBackend;
  /** Subscribes as graphql-ws would, with these credentials (backend id → token). */
  subscribe(query: string, variables?: Record<string, unknown>, tokens?: Record<string, string>): Promise<Subscription>;
  executions: Record<string, number>;
  /** Runs a query or mutation through the real resolvers with these credentials (no HTTP: the resolver path under test). */
  run(query: string, variables?: Record<string, unknown>, tokens?: Record<string, string>): Promise<any>;
  stop(): Promise<void>;
}

/** A running subscription, read in the background. */
export interface Subscription {
  /** Results so far, parsed (SerializedResult or own result). */
  results: any[];
  /** The raw results (to compare shared objects). */
  raw: LiveResult[];
  /** Set when the stream ended (completed, or threw: `error`). */
  done: boolean;
  error: unknown;
  /** An error result instead of a stream. */
  refused?: any;
  return(): Promise<void>;
}

export async function startLive(backends: BackendConfig[], o: { watch?: Record<string, string>; hub?: Partial<LiveHubOptions>; log?: MemoryEventLogOptions; logInstance?: MemoryEventLog } = {}): Promise<LiveUnderTest> {
  const registry = createRegistry(backends.map((b) => (b.kind === 'openstack' ? b : { kind: 'nomad' as const, timeoutMs: 5_000, maxConnections: 16, readRetries: 2, ...b })));
  for (const [id, token] of Object.entries(o.watch ?? {})) pollWatcher(registry.forId(id), token);
  const operations = new OperationTracker({ changes: (id) => { const b = registry.find(id); return b && hasTrackedChanges(b) ? b : undefined; }, pollMs: 50, maxPollMs: 100 });
  const services: GatewayServices = { registry, operations, idempotency: new MemoryIdempotencyStore() };
  const schema = buildGatewaySchema();
  const log = o.logInstance ?? new MemoryEventLog(o.log);
  const executions: Record<string, number> = {};
  const hub = createLiveHub({ log, services, schema, ...o.hub, metrics: { execution: (f) => void (executions[f] = (executions[f] ?? 0) + 1), ...o.hub?.metrics } });
  services.live = hub.mutations;
  hub.start();
  const subs: Subscription[] = [];
  return {
    hub,
    services,
    log,
    executions,
    backend: (id) => registry.forId(id),
    async run(query, variables = {}, tokens = {}) {
      const contextValue = createExecutionContext(services, { credentials: new Map(Object.entries(tokens).map(([b, token]) => [b, { token }])) });
      return JSON.parse(JSON.stringify(await execute({ schema, document: parse(query), variableValues: variables, contextValue })));
    },
    async subscribe(query, variables = {}, tokens = {}) {
      const contextValue = createExecutionContext(services, { credentials: new Map(Object.entries(tokens).map(([b, token]) => [b, { token }])) });
      const r = await hub.subscribe({ schema, document: parse(query), variableValues: variables, contextValue });
      const s: Subscription = { results: [], raw: [], done: false, error: undefined, return: async () => {} };
      if (!(Symbol.asyncIterator in r)) {
        s.refused = JSON.parse(JSON.stringify(r));
        s.done = true;
        return s;
      }
      s.return = async () => void (await r.return());
      void (async () => {
        try {
          for (;;) {
            const n = await r.next();
            if (n.done) break;
            s.raw.push(n.value);
            s.results.push(n.value instanceof SerializedResult ? JSON.parse(n.value.json) : JSON.parse(JSON.stringify(n.value)));
          }
        } catch (err) {
          s.error = err;
        }
        s.done = true;
      })();
      subs.push(s);
      return s;
    },
    async stop() {
      for (const s of subs) await s.return();
      await hub.close();
      await operations.close();
      for (const b of registry.all) await b.close();
    },
  };
}

/** Waits until `cond()` holds (polling; generous deadline). */
export async function until(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The events (data of the root field) a subscription received, SUBSCRIBED included. */
export const events = (s: Pick<Subscription, 'results'>, field = 'volumeChanged'): any[] => s.results.filter((r) => r.data).map((r) => r.data[field]);
