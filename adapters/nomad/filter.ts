/**
 * Builds Nomad `filter` expressions (go-bexpr) from typed input. Callers never send expression
 * text: every value is a quoted string literal, so no argument can inject an operator
 * (backends.md 1.3). Only `\` and `"` need escaping inside a bexpr double-quoted string;
 * control characters are rejected earlier by `safeText`.
 */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** `Selector == "value"` for each pair, joined with `and`; undefined when there is nothing to filter. */
export function equalsAll(pairs: Array<[selector: 'Name' | 'PluginID', value: string | undefined]>): string | undefined {
  const terms = pairs.filter((p): p is [typeof p[0], string] => p[1] !== undefined).map(([sel, v]) => `${sel} == ${quote(v)}`);
  return terms.length > 0 ? terms.join(' and ') : undefined;
}
