/**
 * The per-backend deadline of a merged list (`mergeVolumePages` in `listing.ts`), all of that
 * backend's pages together: past it the backend is left out as FAILED (BACKEND_TIMEOUT) and the
 * other backends are answered.
 */
import { linkedAbort } from './contract/linked-abort';
import type { CallOptions } from './contract/call-options';
import { BackendTimeoutError } from './contract/errors';

/**
 * One backend's deadline within a merged list: its calls carry a signal that aborts with
 * BACKEND_TIMEOUT at the deadline (so nothing more is sent), and `race` answers at the deadline
 * whatever the backend's code is still waiting on.
 */
export function backendDeadline(
  backend: string,
  ms: number,
  o: CallOptions,
): { options: CallOptions; race<T>(p: Promise<T>): Promise<T>; clear(): void } {
  // The deadline alone (what `race` answers), and what the calls carry: the caller or the deadline.
  const deadline = new AbortController();
  const link = linkedAbort(o.signal);
  const timer = setTimeout(() => {
    const err = new BackendTimeoutError(
      `backend "${backend}" did not complete its part of the list within ${ms} ms (the per-backend deadline of merged lists); the other backends were answered`,
      { backend },
    );
    deadline.abort(err);
    link.controller.abort(err);
  }, ms);
  return {
    options: { ...o, signal: link.signal },
    // Only the deadline races: the caller's own signal is answered by the transport as before.
    race<T>(p: Promise<T>): Promise<T> {
      const own = deadline.signal;
      if (own.aborted) return Promise.reject(own.reason as unknown);
      return new Promise<T>((resolve, reject) => {
        const onAbort = (): void => reject(own.reason as unknown);
        own.addEventListener('abort', onAbort, { once: true });
        p.then(resolve, reject).finally(() => own.removeEventListener('abort', onAbort));
      });
    },
    clear: () => {
      clearTimeout(timer);
      link.unlink();
    },
  };
}
