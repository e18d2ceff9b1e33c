/**
 * A watcher's view of its backend's circuit breakers (`breaker.ts`): the watcher reports
 * DEGRADED as soon as one opens, without waiting for its own source to fail or fall silent.
 */
import type { Breaker, BreakerStatus } from './contract/breaker';

/** What a watcher does when a breaker opens or closes. */
export interface BreakerHandlers {
  opened(s: BreakerStatus, why: string): void;
  closed?(s: BreakerStatus): void;
}

export class BreakerWatch {
  /** When a breaker last opened from CLOSED (ms since epoch); 0 while none did. */
  openedAt = 0;
  #unsubscribe: Array<() => void> = [];

  constructor(readonly breakers: readonly Breaker[]) {}

  /** True while any of the breakers is not closed (open, or its probe running: callers are refused either way). */
  get open(): boolean {
    return this.breakers.some((b) => b.state !== 'CLOSED');
  }

  /** `opened` when a breaker leaves CLOSED (a failed probe of an open one is no new opening), `closed` when it closes. */
  start(h: BreakerHandlers): void {
    this.stop();
    this.#unsubscribe = this.breakers.map((b) => {
      let was = b.state;
      return b.onChange((s) => {
        const from = was;
        was = s.state;
        if (s.state === 'CLOSED') h.closed?.(s);
        else if (from === 'CLOSED') {
          this.openedAt = Date.now();
          h.opened(s, `the ${s.service} breaker of backend "${s.backend}" is open${s.reason ? ` (${s.reason})` : ''}`);
        }
      });
    });
  }

  stop(): void {
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
  }
}
