/**
 * The memory backend's health probe: up, unless an injected failure or an open breaker says
 * otherwise (the probe goes through the faults as every call does).
 */
import type { ProbeCall } from '../contract/call-options';
import { timedProbe } from '../contract/health';
import type { BackendHealth } from '../contract/model';
import type { MemoryContext } from './context';

export function health(ctx: MemoryContext, signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
  return timedProbe(async () => {
    const n = await ctx.faults.call({ signal, probe }, () => ctx.store.size);
    return { up: true, message: `${n} volumes held in memory` };
  });
}
