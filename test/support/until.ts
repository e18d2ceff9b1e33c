/** The one polling helper, for tests that wait on something asynchronous (a socket, a watcher, a process, a simulator's transition). */

/**
 * Resolves once `check` holds; throws `timed out waiting for <what>` past `timeoutMs` (generous:
 * the suite runs in parallel on 2 cores). `check` may be async; `what` may be a function, called
 * only on time-out, to tell the state things were in.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Reads with `read` until `done` holds of what it read or `timeoutMs` passes, and returns the last
 * value read either way: the test's own assertion on it then says what state things were left in.
 */
export async function settle<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Whether an operation (a record, or `volumeOperation` as the API answers it) has ended. */
export const isTerminal = (op: { state: string }): boolean =>
  op.state === 'SUCCEEDED' || op.state === 'FAILED' || op.state === 'TIMED_OUT';
