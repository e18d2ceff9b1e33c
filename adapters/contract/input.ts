/**
 * Input rules shared by every backend. They run before any backend call, so a malformed value
 * never turns into a request to a path that was not meant (`../`, `%2F`, `?x=` …), and no
 * encoding step can throw on it (a lone UTF-16 surrogate makes `encodeURIComponent` throw and
 * `URLSearchParams` silently write U+FFFD instead).
 *
 * Backend kinds add their own, stricter rules per position (`adapters/nomad/ids.ts`,
 * `adapters/openstack/ids.ts`) through {@link IdentifierRules} and {@link checkIdentifier}.
 */
import { BadUserInputError, type InputPlace } from './errors';
import { headerValueProblem } from './header-value';

/** Longest identifier (volume id, namespace, node id, plugin id …) accepted. */
export const MAX_IDENTIFIER_LENGTH = 200;
/** Longest free-text value (names, parameter values …) accepted. */
export const MAX_TEXT_LENGTH = 1024;
/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = 500;

// Characters that change a URL's meaning when they reach a path or query, plus C0/C1 controls.
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const UNSAFE_IDENTIFIER = /[/\\?#%\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `value` is well-formed UTF-16 (no lone surrogate), so it can be UTF-8 encoded. */
export function isWellFormed(value: string): boolean {
  const native = (value as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(value) : !LONE_SURROGATE.test(value);
}

/**
 * Checks an identifier that will become a URL path segment or query value, whatever the backend:
 * 1–{@link MAX_IDENTIFIER_LENGTH} characters, well-formed, not `.` or `..` and no `..` inside, no
 * `/ \ ? # %`, no control characters, no surrounding spaces. Returns it unchanged.
 * The message never echoes the value: it may be hostile or a secret pasted by mistake.
 */
export function safeIdentifier(value: string, argument: InputPlace): string {
  if (value.length === 0) throw BadUserInputError.at(argument, (a) => `${a} must not be empty`);
  if (value.length > MAX_IDENTIFIER_LENGTH) {
    throw BadUserInputError.at(argument, (a) => `${a} is longer than ${MAX_IDENTIFIER_LENGTH} characters`);
  }
  if (!isWellFormed(value))
    throw BadUserInputError.at(argument, (a) => `${a} is not well-formed Unicode (it holds a lone UTF-16 surrogate)`);
  if (value === '.' || value.includes('..')) {
    throw BadUserInputError.at(
      argument,
      (a) => `${a} must not be "." or contain ".." (a dot segment would change the backend path)`,
    );
  }
  if (UNSAFE_IDENTIFIER.test(value) || value !== value.trim()) {
    throw BadUserInputError.at(
      argument,
      (a) =>
        `${a} contains a character that is not allowed in an identifier (/, \\, ?, #, %, control characters or surrounding spaces)`,
    );
  }
  return value;
}

/**
 * Encodes one URL path segment. Values were checked by {@link safeIdentifier} already; this
 * is the last line: it refuses (with BAD_USER_INPUT, never a `URIError`) what no encoding can
 * make safe — empty, `.`, `..` and lone surrogates.
 */
export function pathSegment(value: string, argument = 'id'): string {
  if (value === '' || value === '.' || value === '..' || !isWellFormed(value)) {
    throw BadUserInputError.at(argument, (a) => `${a} cannot be used as a path segment`);
  }
  return encodeURIComponent(value);
}

/** Where an identifier goes; each backend kind may have its own rule per position. */
export type IdPosition = 'namespace' | 'volume' | 'snapshot' | 'plugin' | 'node' | 'server' | 'attachment' | 'consumer';

/** One backend rule: a test and what it expects, for the message. */
export interface IdentifierRule {
  test(value: string): boolean;
  /** e.g. `a Nomad namespace (1–128 letters, digits and "-")`. */
  expects: string;
}

/** A backend kind's rules by position; positions without a rule get the shared rules only. */
export type IdentifierRules = Readonly<Partial<Record<IdPosition, IdentifierRule>>>;

/** Shared rules, then the backend's rule for `position`. Returns the value unchanged. */
export function checkIdentifier(
  rules: IdentifierRules,
  position: IdPosition,
  value: string,
  argument: InputPlace,
): string {
  safeIdentifier(value, argument);
  const rule = rules[position];
  if (rule && !rule.test(value)) throw BadUserInputError.at(argument, (a) => `${a} must be ${rule.expects}`);
  return value;
}

/** Checks free text (names, labels, parameter values): bounded length, well-formed, no control characters. */
export function safeText(value: string, argument: InputPlace, maxLength = MAX_TEXT_LENGTH): string {
  if (value.length > maxLength)
    throw BadUserInputError.at(argument, (a) => `${a} is longer than ${maxLength} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(value)) {
    throw BadUserInputError.at(argument, (a) => `${a} contains control characters`);
  }
  if (!isWellFormed(value))
    throw BadUserInputError.at(argument, (a) => `${a} is not well-formed Unicode (it holds a lone UTF-16 surrogate)`);
  return value;
}

/**
 * Checks a value that will travel in an HTTP header, by the transport's own rule
 * (`header-value.ts`: printable Latin-1, no tab). Anything else makes undici reject the request after a
 * connection slot was taken (issue 9, item 2). The message does not echo the value: header
 * values are tokens and secrets.
 */
export function headerText(value: string, argument: InputPlace, maxLength = MAX_TEXT_LENGTH): string {
  if (value.length > maxLength)
    throw BadUserInputError.at(argument, (a) => `${a} is longer than ${maxLength} characters`);
  const problem = headerValueProblem(String(argument), value);
  if (problem !== null) throw BadUserInputError.at(argument, (a) => headerValueProblem(a, value)!);
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
export function byteCount(value: number, argument: InputPlace): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw BadUserInputError.at(argument, (a) => `${a} must be a non-negative whole number of bytes`);
  }
  return value;
}
