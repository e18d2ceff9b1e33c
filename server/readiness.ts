/**
 * What `/readyz` answers: readiness of the gateway itself by default, with each backend's state
 * (last background probe, breakers, watcher) in the body. A background probe with the gateway's
 * own credential feeds the state; `/readyz` only reads it, so it answers at once however slow or
 * hung a backend is (docs/scaling.md "Readiness behind a load balancer").
 *
 * The same probe is what closes an open circuit breaker (adapters/contract/breaker.ts): callers
 * are refused while one is open; the probe runs when its open time ends, then every
 * `probeIntervalMs` (start to start), each within its own deadline `probeTimeoutMs`. So a breaker
 * closes when its open time ends or within one probe interval (plus the probe's answer) of the
 * backend's return, whichever is later.
 *
 * A backend outage does not make a replica unready unless the operator asks for it
 * (`READINESS_REQUIRE`): every replica sees the same backend, so a load balancer would drop them
 * all at once, though queries still return partial results. Redis down alone leaves the gateway
 * ready as well (keyed creates are refused meanwhile).
 */
import type { BreakerStatus } from '../adapters/contract/breaker';
import { GatewayAttr, inBackgroundSpan } from '../adapters/http/tracing';
import type { BackendHealth, BackendKind } from '../adapters/contract/model';
import type { WatcherStatus } from '../adapters/contract/watch';
import type { RedisHealth } from './redis';
import type { BackendRegistry } from '../domain/registry';

/** Which backends readiness requires: none (default), at least one, or every one. */
export type ReadinessRequire = 'none' | 'any' | 'all';

/** Readiness settings (env `READINESS_*`, file `readiness`). */
export interface ReadinessConfig {
  /** Backends a ready gateway needs available. @default 'none' (env `READINESS_REQUIRE`) */
  require: ReadinessRequire;
  /** Time from one background probe of each backend (and Redis) to the next, ms. @default 5000 (env `READINESS_PROBE_INTERVAL_MS`) */
  probeIntervalMs: number;
  /** Deadline of each request of a backend's probe, ms (at most the backend's call deadline). @default 2000 (env `READINESS_PROBE_TIMEOUT_MS`) */
  probeTimeoutMs: number;
}

/**
 * What the background probe covers: every backend and Redis (`all`), or only the backends that
 * have a breaker not closed (`breakers`: what an open breaker needs to close, and nothing that
 * shows in a backend's request log otherwise; tests that count requests use it).
 */
export type ProbeScope = 'all' | 'breakers';

/** On SIGTERM, how long `/readyz` answers 503 while the gateway still serves, ms (`SHUTDOWN_DRAIN_MS`, outside demo mode). */
export const DEFAULT_SHUTDOWN_DRAIN_MS = 5_000;

export const READINESS_DEFAULTS: Readonly<ReadinessConfig> = Object.freeze({
  require: 'none',
  probeIntervalMs: 5_000,
  probeTimeoutMs: 2_000,
});

/** One backend as `/readyz` shows it. */
export interface BackendReadiness {
  id: string;
  kind: BackendKind;
  /** The last probe's result; `UNKNOWN` before the first one ended. */
  status: BackendHealth['status'] | 'UNKNOWN';
  latencyMs: number | null;
  message: string | null;
  checkedAt: string | null;
  /** Probe UP and every breaker CLOSED: what `READINESS_REQUIRE` counts. */
  available: boolean;
  breakers: BreakerStatus[];
  /** The watcher's state; null without one. */
  watcher: WatcherStatus | null;
}

export interface ReadinessReport {
  ready: boolean;
  /** Shutting down: not ready whatever the backends do, while requests are still served. */
  draining: boolean;
  require: ReadinessRequire;
  backends: BackendReadiness[];
  redis: RedisHealth;
  /** The live hub's watcher statuses (as before; also per backend above). */
  watchers: unknown[];
}

export interface ReadinessOptions {
  registry: BackendRegistry;
  config?: Partial<ReadinessConfig>;
  /** Redis' PING, probed in the background too. @default none (NOT_CONFIGURED) */
  redis?: () => Promise<RedisHealth>;
  /** The live hub's statuses, read when `/readyz` asks. @default none */
  watchers?: () => Array<{ backend: string; watcher: WatcherStatus | null }>;
}

const NOT_CONFIGURED: RedisHealth = {
  status: 'NOT_CONFIGURED',
  latencyMs: null,
  message: 'Redis is not configured (REDIS_URL): operation records are kept in this process only',
};
const NOT_PROBED: RedisHealth = { status: 'DOWN', latencyMs: null, message: 'not probed yet' };

/** The state `/readyz` reads, kept current by background probes. */
export class ReadinessState {
  readonly #o: ReadinessOptions;
  readonly #config: ReadinessConfig;
  readonly #health = new Map<string, BackendHealth>();
  #redis: RedisHealth;
  readonly #stop = new AbortController();
  readonly #loops: Promise<void>[] = [];
  #draining = false;
  #unsubscribe: (() => void) | undefined;

  constructor(o: ReadinessOptions) {
    this.#o = o;
    this.#config = { ...READINESS_DEFAULTS, ...o.config };
    this.#redis = o.redis ? NOT_PROBED : NOT_CONFIGURED;
  }

  /** Starts probing every backend (and Redis) now and then every `probeIntervalMs`, each on its own. */
  start(scope: ProbeScope = 'all'): void {
    if (this.#loops.length > 0) return;
    const { breakers } = this.#o.registry;
    breakers.probedEvery(this.#config.probeIntervalMs);
    const probe = { timeoutMs: this.#config.probeTimeoutMs };
    // A breaker that opens wakes its backend's loop, which then sleeps until the open time ends.
    const wakers = new Map<string, () => void>();
    this.#unsubscribe = breakers.onChange((s) => {
      if (s.state === 'OPEN') wakers.get(s.backend)?.();
    });
    for (const b of this.#o.registry.all) {
      const run = async (): Promise<void> => {
        if (scope === 'breakers' && breakers.statuses(b.id).every((s) => s.state === 'CLOSED')) return;
        // Background work: its backend calls are one trace, sampled as background (docs/tracing.md).
        const health = await inBackgroundSpan('probe backend', { [GatewayAttr.backend]: b.id }, () =>
          b.health(this.#stop.signal, probe),
        );
        this.#health.set(b.id, health);
      };
      this.#loops.push(
        this.#every(run, { due: () => breakers.probeDueAt(b.id), wakers: (wake) => wakers.set(b.id, wake) }),
      );
    }
    const redis = this.#o.redis;
    if (redis && scope === 'all') {
      this.#loops.push(
        this.#every(async () => {
          this.#redis = await redis();
        }),
      );
    }
  }

  /**
   * From now on the gateway is not ready (503, `draining: true`), so load balancers take it out
   * while it still serves (SIGTERM's drain period, server/main.ts).
   */
  drain(): void {
    this.#draining = true;
  }

  /** Stops probing; a probe still on the wire is cancelled. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#stop.abort();
    await Promise.all(this.#loops);
  }

  /** The report, from held state only: never waits on a backend. */
  report(): ReadinessReport {
    const hub = this.#o.watchers?.() ?? [];
    const watcherOf = new Map(hub.map((s) => [s.backend, s.watcher]));
    const backends = this.#o.registry.all.map((b): BackendReadiness => {
      const h = this.#health.get(b.id);
      const breakers = this.#o.registry.breakers.statuses(b.id);
      return {
        id: b.id,
        kind: b.kind,
        status: h?.status ?? 'UNKNOWN',
        latencyMs: h?.latencyMs ?? null,
        message: h ? h.message : 'not probed yet',
        checkedAt: h?.checkedAt ?? null,
        available: h?.status === 'UP' && breakers.every((s) => s.state === 'CLOSED'),
        breakers,
        watcher: watcherOf.get(b.id) ?? null,
      };
    });
    const require = this.#config.require;
    const ready =
      !this.#draining &&
      (require === 'none' ||
        backends.length === 0 ||
        (require === 'all' ? backends.every((b) => b.available) : backends.some((b) => b.available)));
    return { ready, draining: this.#draining, require, backends, redis: this.#redis, watchers: hub };
  }

  /**
   * Runs `probe` now and then every `probeIntervalMs` from one start to the next (later when a
   * probe took longer) until stopped; one probe at a time per loop. With `due`, it also runs when a
   * breaker's open time ends (`due()` in the future), re-planned whenever `wakers`' wake is called.
   */
  async #every(
    probe: () => Promise<void>,
    o: { due?: () => number | undefined; wakers?: (wake: () => void) => void } = {},
  ): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const next = Date.now() + this.#config.probeIntervalMs;
      await probe().catch(() => undefined);
      for (let woken = true; woken && !signal.aborted;) {
        const due = o.due?.();
        // A few ms past the open time's end, so the breaker admits the probe.
        const at = due !== undefined && due > Date.now() ? Math.min(next, due + 5) : next;
        woken = await this.#sleep(at - Date.now(), o.wakers);
      }
    }
  }

  /** Sleeps `ms`, or until stopped (false), or until woken (true). */
  #sleep(ms: number, wakers?: (wake: () => void) => void): Promise<boolean> {
    const signal = this.#stop.signal;
    return new Promise<boolean>((resolve) => {
      const done = (woken: boolean): void => {
        clearTimeout(t);
        signal.removeEventListener('abort', stopped);
        wakers?.(() => undefined);
        resolve(woken);
      };
      const stopped = (): void => done(false);
      const t = setTimeout(() => done(false), Math.max(0, ms));
      signal.addEventListener('abort', stopped, { once: true });
      wakers?.(() => done(true));
    });
  }
}
