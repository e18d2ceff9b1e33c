/**
 * Go standard-library behaviour that leaks onto Nomad's wire: `strconv` parsing and its error
 * texts, `time.ParseDuration`, RFC3339Nano formatting, `net/url` query parsing, go-multierror's
 * format and go-humanize's byte sizes. Kept in one place so every route parses a query
 * parameter exactly like the Go handler it stands in for.
 */

/** A Go `strconv.NumError`-style failure. `message` is the text Go would print. */
export class GoParseError extends Error {}

/** `strconv.Quote` for the characters that show up in ids and error messages. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || c === 0xa0) out += '\\u' + c.toString(16).padStart(4, '0');
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}

/** `strconv.ParseBool`. */
export function parseBool(s: string): boolean {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
  }
  throw new GoParseError(`strconv.ParseBool: parsing ${goQuote(s)}: invalid syntax`);
}

/**
 * `strconv.ParseInt(s, base, bits)` / `ParseUint`, including base 0 (prefixes 0x, 0o, 0b, leading
 * 0 for octal, and `_` separators), returning a bigint. Errors carry Go's exact text.
 */
export function parseGoInt(s: string, base: number, bits: number, unsigned: boolean): bigint {
  const fn = unsigned ? 'strconv.ParseUint' : 'strconv.ParseInt';
  const syntax = (): never => {
    throw new GoParseError(`${fn}: parsing ${goQuote(s)}: invalid syntax`);
  };
  const range = (): never => {
    throw new GoParseError(`${fn}: parsing ${goQuote(s)}: value out of range`);
  };
  if (s === '') syntax();
  let t = s;
  let neg = false;
  if (!unsigned && (t[0] === '+' || t[0] === '-')) {
    neg = t[0] === '-';
    t = t.slice(1);
    if (t === '') syntax();
  }
  let b = base;
  let underscoresOk = false;
  if (b === 0) {
    b = 10;
    underscoresOk = true;
    if (t[0] === '0') {
      const p = t[1]?.toLowerCase();
      if (t.length >= 3 && p === 'b') {
        b = 2;
        t = t.slice(2);
      } else if (t.length >= 3 && p === 'o') {
        b = 8;
        t = t.slice(2);
      } else if (t.length >= 3 && p === 'x') {
        b = 16;
        t = t.slice(2);
      } else {
        b = 8;
        t = t.slice(1);
        if (t === '') return 0n;
      }
    }
  }
  if (underscoresOk && t.includes('_')) {
    // Go requires underscores only between digits (after an optional base prefix).
    if (t.startsWith('_') || t.endsWith('_') || t.includes('__')) syntax();
    t = t.replace(/_/g, '');
  }
  let n = 0n;
  for (const ch of t) {
    const d = parseInt(ch, 36);
    if (Number.isNaN(d) || d >= b) syntax();
    n = n * BigInt(b) + BigInt(d);
  }
  if (unsigned) {
    if (n > (1n << BigInt(bits)) - 1n) range();
    return n;
  }
  const max = (1n << BigInt(bits - 1)) - 1n;
  if (neg) {
    if (n > max + 1n) range();
    return -n;
  }
  if (n > max) range();
  return n;
}

/** `strconv.Atoi`, with its own function name in errors. */
export function atoi(s: string): number {
  try {
    return Number(parseGoInt(s, 10, 64, false));
  } catch (e) {
    throw new GoParseError((e as Error).message.replace('strconv.ParseInt', 'strconv.Atoi'));
  }
}

/** `strconv.ParseFloat(s, 64)` for the decimal forms bexpr values can take. */
export function parseGoFloat(s: string, bits: 32 | 64): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s) && !/^[+-]?(inf|infinity|nan)$/i.test(s)) {
    throw new GoParseError(`strconv.ParseFloat: parsing ${goQuote(s)}: invalid syntax`);
  }
  const n = Number(
    s
      .toLowerCase()
      .replace('infinity', 'Infinity')
      .replace(/^([+-]?)inf$/, '$1Infinity'),
  );
  if (bits === 32) return Math.fround(n);
  return n;
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};

/**
 * `time.ParseDuration`: returns nanoseconds or throws with Go's error text. Used for `?wait=`
 * (hashicorp/nomad command/agent/http.go `parseWait`), where any failure becomes `400 Invalid wait time`.
 */
export function parseDuration(input: string): bigint {
  const bad = (): never => {
    throw new GoParseError(`time: invalid duration ${goQuote(input)}`);
  };
  let s = input;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') bad();
  let total = 0n;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const intPart = m[1] ?? '';
    const frac = m[2];
    if (intPart === '' && (frac === undefined || frac === '')) bad();
    s = s.slice(m[0].length);
    const u = /^[^0-9.]+/.exec(s);
    if (!u) throw new GoParseError(`time: missing unit in duration ${goQuote(input)}`);
    const unit = DURATION_UNITS[u[0]];
    if (unit === undefined) throw new GoParseError(`time: unknown unit ${goQuote(u[0])} in duration ${goQuote(input)}`);
    s = s.slice(u[0].length);
    let v = BigInt(intPart === '' ? '0' : intPart) * unit;
    if (frac) {
      const scale = 10n ** BigInt(frac.length);
      v += (BigInt(frac) * unit) / scale;
    }
    total += v;
    if (total > (1n << 63n) - 1n) bad();
  }
  return neg ? -total : total;
}

/**
 * Formats a Unix-nanosecond time as Go's `time.RFC3339Nano` in UTC (fraction trimmed of
 * trailing zeros, omitted when zero), which is how go-msgpack writes a non-zero `time.Time`.
 */
export function rfc3339Nano(ns: bigint): string {
  const ms = ns / 1000000n;
  const date = new Date(Number(ms));
  const base = date.toISOString().slice(0, 19);
  let frac = (((ns % 1000000000n) + 1000000000n) % 1000000000n).toString().padStart(9, '0');
  frac = frac.replace(/0+$/, '');
  return base + (frac ? '.' + frac : '') + 'Z';
}

/**
 * `req.URL.Query()`: splits on `&`, decodes `+` and `%XX`, keeps the first-seen key order.
 * Pairs Go cannot parse (bad escapes, semicolons) are dropped, as `Query()` ignores the error.
 */
export function parseGoQuery(raw: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of raw.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const k = goUnescape(eq < 0 ? part : part.slice(0, eq), true);
    const v = goUnescape(eq < 0 ? '' : part.slice(eq + 1), true);
    if (k === null || v === null) continue;
    const list = out.get(k);
    if (list) list.push(v);
    else out.set(k, [v]);
  }
  return out;
}

/** `url.QueryUnescape` / `PathUnescape`; null when Go would report an invalid escape. */
export function goUnescape(s: string, plusIsSpace: boolean): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (ch === '+' && plusIsSpace) bytes.push(0x20);
    else for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** go-multierror's default format (`N error(s) occurred:\n\t* …\n\n`). */
export function multierror(errors: string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n${errors.map((e) => `\t* ${e}`).join('\n')}\n\n`;
}

/** go-humanize `Bytes` (SI units), used in Nomad's volume expansion errors. */
export function humanizeBytes(n: bigint): string {
  const sizes = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const s = Number(n);
  if (s < 10) return `${s} B`;
  const e = Math.floor(Math.log(s) / Math.log(1000));
  const suffix = sizes[e] ?? 'EB';
  const val = Math.floor((s / 1000 ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${suffix}` : `${val.toFixed(0)} ${suffix}`;
}

/** Byte-wise comparison of two strings as Go's `strings.Compare` does on UTF-8. */
export function goCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
