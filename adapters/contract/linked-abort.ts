/**
 * A controller that also aborts when a parent signal does: what `AbortSignal.any([parent, own])`
 * gives, without its cost on Node 20, where every composite signal is tracked through weak
 * references in its sources and kept alive while it has listeners (about 20 µs and a few KiB of
 * garbage-collector work per call, measured; a list with attachments makes a hundred calls).
 * Each parent gets one listener however many children it has, so a parent shared by many
 * concurrent calls (an execution's signal) never trips Node's max-listeners warning.
 */

const childrenOf = new WeakMap<AbortSignal, Set<AbortController>>();

/** A linked controller; `unlink()` (idempotent) lets the parent forget it once its work is over. */
export interface LinkedAbort {
  readonly controller: AbortController;
  readonly signal: AbortSignal;
  unlink(): void;
}

const noop = (): void => undefined;

/** A new controller aborted with the parent's reason when `parent` aborts (at once if it has). */
export function linkedAbort(parent: AbortSignal | undefined): LinkedAbort {
  const controller = new AbortController();
  if (parent === undefined) return { controller, signal: controller.signal, unlink: noop };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, signal: controller.signal, unlink: noop };
  }
  let children = childrenOf.get(parent);
  if (children === undefined) {
    const set = (children = new Set());
    childrenOf.set(parent, set);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(parent.reason);
        set.clear();
      },
      { once: true },
    );
  }
  children.add(controller);
  const set = children;
  return { controller, signal: controller.signal, unlink: () => void set.delete(controller) };
}
