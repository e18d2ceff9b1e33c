/**
 * The live path across replicas in Prometheus (docs/scaling.md, "Metrics"): the leases this
 * replica holds, its event-log reader's lag and its follower views, read at scrape time. Every
 * replica exports them; `gateway_live_lease_held` is 1 on the holder only, and the watcher series
 * (`gateway_live_watcher_*`, live-metrics.ts) show the holder's watcher on every replica.
 */
import { Gauge, type Registry } from 'prom-client';
import type { LiveReplication } from './live-replication';

export class ReplicationMetrics {
  readonly #current: { r: LiveReplication | undefined } = { r: undefined };

  constructor(registry: Registry) {
    const registers = [registry];
    const cur = this.#current;
    // One report per scrape for all five gauges: its log lag is a Redis call.
    let last: { at: number; report: ReturnType<LiveReplication['report']> } | null = null;
    const report = async () => {
      if (!cur.r) return undefined;
      if (!last || Date.now() - last.at > 1000) last = { at: Date.now(), report: cur.r.report() };
      return last.report;
    };
    const held = new Gauge({
      name: 'gateway_live_lease_held',
      help: "1 for each backend whose watcher lease this replica holds (it runs the backend's watcher), 0 for the others.",
      labelNames: ['backend'] as const,
      registers,
      collect: async () => {
        held.reset();
        for (const b of (await report())?.backends ?? []) held.set({ backend: b.backend }, b.role === 'HOLDER' ? 1 : 0);
      },
    });
    const complete = new Gauge({
      name: 'gateway_live_follower_view_complete',
      help: "1 when this replica's view of a backend (from the shared log) is complete and followed, 0 while it is rebuilt.",
      labelNames: ['backend'] as const,
      registers,
      collect: async () => {
        complete.reset();
        for (const b of (await report())?.backends ?? []) complete.set({ backend: b.backend }, b.viewComplete ? 1 : 0);
      },
    });
    const connected = new Gauge({
      name: 'gateway_event_log_reader_connected',
      help: "1 while this replica's reader of the shared event log (Redis stream) is connected.",
      registers,
      collect: async () => {
        const r = await report();
        if (r) connected.set(r.log.connected ? 1 : 0);
      },
    });
    const behind = new Gauge({
      name: 'gateway_event_log_behind_events',
      help: "Events in the shared log this replica's reader has not read yet.",
      registers,
      collect: async () => {
        const r = await report();
        if (r?.log.behind != null) behind.set(r.log.behind);
      },
    });
    const age = new Gauge({
      name: 'gateway_event_log_oldest_unread_seconds',
      help: 'Age of the oldest event in the shared log this replica has not read yet (0 when caught up).',
      registers,
      collect: async () => {
        const r = await report();
        if (r) age.set((r.log.oldestUnreadAgeMs ?? 0) / 1000);
      },
    });
  }

  /** Reads the replication's state at scrape time. */
  watch(r: LiveReplication): void {
    this.#current.r = r;
  }
}
