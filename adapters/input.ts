/**
 * Input rules shared by every backend. They run before any backend call, so a malformed value
 * never turns into a request to a path that was not meant (`../`, `%2F`, `?x=` …).
 */
import { BadUserInputError } from './errors';

/** Longest identifier (volume id, namespace, node id, plugin id …) accepted. */
export const MAX_IDENTIFIER_LENGTH = 200;
/** Longest free-text value (names, parameter values …) accepted. */
export const MAX_TEXT_LENGTH = 1024;
/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = 500;

// Characters that change a URL's meaning when they reach a path or query, plus controls.
const UNSAFE_IDENTIFIER = /[/\\?#%\u0000-\u001f\u007f]/;

/** Checks an identifier that will become a URL path segment or query value. Returns it unchanged. */
export function safeIdentifier(value: string, argument: string): string {
  if (value.length === 0) throw new BadUserInputError(`${argument} must not be empty`, argument);
  if (value.length > MAX_IDENTIFIER_LENGTH) {
    throw new BadUserInputError(`${argument} is longer than ${MAX_IDENTIFIER_LENGTH} characters`, argument);
  }
  if (UNSAFE_IDENTIFIER.test(value) || value.includes('..') || value !== value.trim()) {
    throw new BadUserInputError(
      `${argument} contains a character that is not allowed in an identifier (/, \\, ?, #, %, "..", control characters or surrounding spaces)`,
      argument,
    );
  }
  return value;
}

/** Checks free text (names, labels, parameter values): bounded length, no control characters. */
export function safeText(value: string, argument: string, maxLength = MAX_TEXT_LENGTH): string {
  if (value.length > maxLength) throw new BadUserInputError(`${argument} is longer than ${maxLength} characters`, argument);
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(value)) {
    throw new BadUserInputError(`${argument} contains control characters`, argument);
  }
  return value;
}

/** Checks a page size (`first`): 0 ≤ n ≤ {@link MAX_PAGE_SIZE}. */
export function pageSize(first: number | null | undefined, defaultSize: number): number {
  if (first === null || first === undefined) return defaultSize;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw new BadUserInputError(`first must be an integer from 0 to ${MAX_PAGE_SIZE}`, 'first');
  }
  return first;
}

/** Checks a byte count (capacity): a non-negative safe integer. */
export function byteCount(value: number, argument: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new BadUserInputError(`${argument} must be a non-negative whole number of bytes`, argument);
  }
  return value;
}
