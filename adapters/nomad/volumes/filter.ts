/**
 * Builds Nomad `filter` expressions (go-bexpr) from typed input. Callers never send expression
 * text: every value becomes one string literal, so no argument can add an operator or a term
 * (the grammar: hashicorp/go-bexpr; Nomad's API docs, "Filtering").
 *
 * go-bexpr's grammar has no escape for the closing quote: a backtick string is raw up to the next
 * backtick, and a double-quoted string ends at the next `"` and is then unquoted like a Go
 * string (`\\` → `\`). So a value without a backtick is sent raw in backticks; one with a
 * backtick but no `"` in double quotes with `\` doubled; one with both cannot be expressed.
 */
import { BadUserInputError } from '../../contract/errors';

export function quote(value: string, argument = 'filter'): string {
  if (!value.includes('`')) return `\`${value}\``;
  if (!value.includes('"')) return `"${value.replace(/\\/g, '\\\\')}"`;
  throw new BadUserInputError(
    `${argument} cannot contain both a backtick and a double quote (Nomad filter strings cannot express it)`,
    argument,
  );
}

/** `Selector == <literal>` for each pair with a value, joined with `and`; undefined when none. */
export function equalsAll(
  pairs: Array<[selector: 'Name' | 'PluginID', value: string | undefined, argument: string]>,
): string | undefined {
  const terms = pairs
    .filter((p): p is [(typeof p)[0], string, string] => p[1] !== undefined)
    .map(([sel, v, arg]) => `${sel} == ${quote(v, arg)}`);
  return terms.length > 0 ? terms.join(' and ') : undefined;
}
