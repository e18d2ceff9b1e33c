/**
 * Listing tokens of this backend: Cinder and Nova page by `marker`, the id of the last item seen,
 * so a position is the id before an item (or {@link START} for the first) and a next token is the
 * last id of a page.
 */
import { BadUserInputError } from '../contract/errors';
import { UUID } from './ids';

/** Listing token meaning "from the start". */
export const START = '^';
/** Cinder's and Nova's page cap (osapi_max_limit). */
export const MAX_LIMIT = 1000;

/** The marker a listing token stands for (undefined: from the start). */
export function marker(token: string | null, argument = 'after'): string | undefined {
  if (token === null || token === START) return undefined;
  if (!UUID.test(token))
    throw new BadUserInputError('the cursor does not name a position in this OpenStack listing', argument);
  return token;
}

/** Each item with the token that resumes a listing at it. */
export const positioned = <T>(
  items: readonly T[],
  ids: readonly string[],
  from: string | undefined,
): Array<{ item: T; position: string }> =>
  items.map((item, i) => ({ item, position: i === 0 ? (from ?? START) : ids[i - 1]! }));
