/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  // At least one worker: a limit below 1 would otherwise return holes without running anything.
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

/** `err` as an Error (a thrown non-Error is wrapped). */
export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** {@link mapWithConcurrency}, with each failure kept in its item's place as an Error (a DataLoader batch's shape). */
export function mapSettled<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<Array<R | Error>> {
  return mapWithConcurrency(items, limit, (item) => fn(item).catch(asError));
}
