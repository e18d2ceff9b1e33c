/** Polling for tests that wait on something asynchronous (a socket, a watcher, a process). */

/**
 * Resolves once `check` holds; throws `timed out waiting for <what>` past `timeoutMs` (generous:
 * the suite runs in parallel on 2 cores). `check` may be async.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000, everyMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
