/**
 * The header-value rule: what may travel in an HTTP header. An input rule (caller values such as
 * tokens, CSI secrets and request ids are checked by it, `input.ts`'s headerText), and the rule
 * the transport's backstop applies before undici (`adapters/http/headers.ts`).
 */
import { BadUserInputError } from './errors';

/**
 * Printable Latin-1: SP to `~` and NBSP to `ÿ`. Not HTAB: no token, secret or id has one, and
 * HTTP servers trim it at the ends of a value (Go's textproto does), so it would arrive altered.
 * Not the C0/C1 controls and DEL. Nothing above U+00FF: a header is bytes, and undici refuses it.
 */
const PRINTABLE_LATIN1 = /^[\x20-\x7e\xa0-\xff]*$/;

/** True when `value` may be sent as a header value unchanged. */
export function isPrintableLatin1(value: string): boolean {
  return PRINTABLE_LATIN1.test(value);
}

/**
 * Why `value` cannot be sent as a header value, starting with `what` and naming the position of
 * the first bad character, never the value (it may be a secret); null when it can be sent.
 * @param what how the caller knows the field, e.g. `header X-Nomad-Token` or `secrets`
 */
export function headerValueProblem(what: string, value: string): string | null {
  if (isPrintableLatin1(value)) return null;
  const at = [...value].findIndex((c) => !PRINTABLE_LATIN1.test(c));
  return `${what}: character ${at + 1} is not allowed in an HTTP header (printable Latin-1 only: no control characters, tabs, line breaks or characters above U+00FF)`;
}

/**
 * Refuses a header value that is not printable Latin-1 ({@link headerValueProblem}).
 * @throws BadUserInputError
 */
export function checkHeaderValue(what: string, value: string, argument?: string): void {
  const problem = headerValueProblem(what, value);
  if (problem !== null) throw new BadUserInputError(problem, argument);
}
