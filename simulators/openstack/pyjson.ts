/**
 * Python-flavoured text: the services are Python, so their JSON is `json.dumps` output
 * (`", "` and `": "` separators, non-ASCII escaped), their validation messages embed `repr()`
 * and `str()` of values, and next links are `urllib.parse.urlencode` output.
 */

/** `json.dumps(value)` with the default separators and `ensure_ascii=True`. */
export function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return asciiString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${asciiString(k)}: ${pyDumps(v)}`).join(', ')}}`;
}

function asciiString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Python `repr()` of a JSON value (dicts with single-quoted keys, True/False/None). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
    return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
    .join(', ')}}`;
}

/** Python `str()` of a JSON value: strings bare, everything else as repr. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** `urllib.parse.quote_plus`: only `A-Za-z0-9_.-~` stay, space becomes `+`. */
export function quotePlus(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** `urllib.parse.urlencode(pairs)`. */
export function urlencode(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
}

/** `oslo_utils.strutils.bool_from_string(strict=True)` accepted spellings (Cinder's enum list). */
export const PY_BOOL_VALUES: readonly (string | boolean)[] = [
  true,
  'True',
  'TRUE',
  'true',
  '1',
  'ON',
  'On',
  'on',
  'YES',
  'Yes',
  'yes',
  'y',
  't',
  false,
  'False',
  'FALSE',
  'false',
  '0',
  'OFF',
  'Off',
  'off',
  'NO',
  'No',
  'no',
  'n',
  'f',
];

/** Parses a bool-ish value like `bool_from_string(strict=True)`; undefined when unrecognised. */
export function pyBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (['1', 't', 'true', 'on', 'y', 'yes'].includes(s)) return true;
  if (['0', 'f', 'false', 'off', 'n', 'no'].includes(s)) return false;
  return undefined;
}

/** The enum text jsonschema prints for Cinder's boolean parameter type. */
export function pyBoolEnumText(): string {
  return `[${PY_BOOL_VALUES.map(pyRepr).join(', ')}]`;
}
