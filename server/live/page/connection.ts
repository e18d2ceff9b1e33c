/** How the live page reacts to a subscription ending: pure helpers, unit-tested. */

/** graphql-ws close codes after which retrying with the same credentials cannot help (PROTOCOL.md). */
export const FATAL_CLOSE_CODES = new Set([4400, 4401, 4403]);

/** GraphQL error codes after which retrying cannot help until the user changes something. */
export const FATAL_ERROR_CODES = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
]);

/** Wait before reconnect attempt `n` (0-based): 0.5 s doubling to 15 s, with up to 20 % jitter so pages do not return in step. */
export function backoffMs(n: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** Math.min(n, 10));
  return Math.round(base * (0.8 + 0.2 * random()));
}

interface ErrorLike {
  message?: unknown;
  extensions?: { code?: unknown };
}

/** The `extensions.code`s of what graphql-ws hands the error sink (an array of GraphQL errors, a close event or an Error). */
export function errorCodes(err: unknown): string[] {
  if (!Array.isArray(err)) return [];
  return err.flatMap((e: ErrorLike) => (typeof e?.extensions?.code === 'string' ? [e.extensions.code] : []));
}

/** One line for the connection indicator. */
export function describeClose(err: unknown): string {
  if (Array.isArray(err))
    return err
      .map(
        (e: ErrorLike) =>
          `${typeof e?.extensions?.code === 'string' ? `${e.extensions.code}: ` : ''}${typeof e?.message === 'string' ? e.message : 'error'}`,
      )
      .join('; ');
  const close = err as { code?: unknown; reason?: unknown } | null;
  if (close && typeof close.code === 'number')
    return `socket closed ${close.code}${typeof close.reason === 'string' && close.reason ? ` ${close.reason}` : ''}`;
  if (err instanceof Error) return err.message;
  return 'could not open the socket';
}
