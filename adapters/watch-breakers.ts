/**
 * A watcher's view of its backend's circuit breakers (`breaker.ts`): the watcher reports
 * DEGRADED as soon as one opens, without waiting for its own source to fail or fall silent.
 */
import type { Breaker, BreakerStatus } from './http/breaker';

/** What a watcher does when a breaker opens or closes. */
export interface BreakerHandlers {
  opened(s: BreakerStatus, why: string): void;
  closed?(s: BreakerStatus): void;
}

export class BreakerWatch {
  /** When a breaker last opened (ms since epoch); 0 while none did. */
  openedAt = 0;
  #unsubscribe: Array<() => void> = [];

  constructor(readonly breakers: readonly Breaker[]) {}

  /** True while any of the breakers is OPEN (not half-open). */
  get open(): boolean {
    return this.breakers.some((b) => b.state === 'OPEN');
  }

  start(h: BreakerHandlers): void {
    this.stop();
    this.#unsubscribe = this.breakers.map((b) =>
      b.onChange((s) => {
        if (s.state === 'OPEN') {
          this.openedAt = Date.now();
          h.opened(s, `the ${s.service} breaker of backend "${s.backend}" is open${s.reason ? ` (${s.reason})` : ''}`);
        } else if (s.state === 'CLOSED') h.closed?.(s);
      }),
    );
  }

  stop(): void {
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
  }
}
