/**
 * Go-style JSON encoder, the way Nomad renders responses (hashicorp/go-msgpack v2.1.5 codec/json.go,
 * the JSON handle hashicorp/nomad nomad/structs uses).
 *
 * Nomad encodes with hashicorp/go-msgpack's JSON handle, not `encoding/json`: struct fields come
 * out in declaration order and are always present, nil maps/slices are `null`, and int64/uint64
 * values are written as exact integer literals. JavaScript cannot hold a nanosecond timestamp
 * (≈1.7e18) in a `number` without losing precision, so the simulator keeps such values as
 * `bigint` and this encoder writes them digit for digit.
 *
 * Value model:
 * - plain objects are Go structs: keys are written in insertion order (build them in Go
 *   declaration order);
 * - `Map<string, …>` is a Go map (insertion order; Go's own order is random, any order is valid);
 * - `bigint` and integral `number` are integers; `null` is nil; strings, booleans, arrays as usual.
 */

/** A value the encoder understands. */
export type GoJSON =
  | null
  | boolean
  | number
  | bigint
  | string
  | GoJSON[]
  | ReadonlyMap<string, GoJSON>
  | { readonly [field: string]: GoJSON };

/**
 * Encodes `value` the way Nomad does. With `pretty`, output is indented by 4 spaces with
 * `": "` separators (go-msgpack's pretty handle); the trailing newline Nomad appends for
 * `?pretty` is the caller's business.
 */
export function encodeGo(value: GoJSON, pretty = false): string {
  const out: string[] = [];
  write(value, pretty ? '' : null, out);
  return out.join('');
}

function write(v: GoJSON, indent: string | null, out: string[]): void {
  if (v === null) {
    out.push('null');
    return;
  }
  switch (typeof v) {
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'bigint':
      out.push(v.toString());
      return;
    case 'number':
      out.push(formatNumber(v));
      return;
    case 'string':
      out.push(quoteJSON(v));
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`encodeGo: unsupported value of type ${typeof v}`);
  }
  const inner = indent === null ? null : indent + '    ';
  if (Array.isArray(v)) {
    if (v.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[');
    v.forEach((item, i) => {
      if (i > 0) out.push(',');
      if (inner !== null) out.push('\n', inner);
      write(item, inner, out);
    });
    if (indent !== null) out.push('\n', indent);
    out.push(']');
    return;
  }
  const entries: Array<[string, GoJSON]> = isMap(v) ? [...v.entries()] : Object.entries(v);
  if (entries.length === 0) {
    out.push('{}');
    return;
  }
  out.push('{');
  entries.forEach(([k, item], i) => {
    if (item === undefined) throw new TypeError(`encodeGo: field ${k} is undefined`);
    if (i > 0) out.push(',');
    if (inner !== null) out.push('\n', inner);
    out.push(quoteJSON(k), inner !== null ? ': ' : ':');
    write(item, inner, out);
  });
  if (indent !== null) out.push('\n', indent);
  out.push('}');
}

/** Realm-independent Map check (values may come from another vm context, e.g. under jest). */
function isMap(v: object): v is ReadonlyMap<string, GoJSON> {
  return Object.prototype.toString.call(v) === '[object Map]';
}

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`encodeGo: non-finite number ${n}`);
  if (Number.isInteger(n)) {
    // Integers beyond 2^53 must arrive as bigint; a number here is already exact.
    return BigInt(n).toString();
  }
  return String(n);
}

/**
 * Quotes a string like go-msgpack's JSON handle with HTMLCharsAsIs: `<`, `>` and `&` stay
 * literal, control characters are escaped, U+2028/U+2029 are escaped (JavaScript-safe) and
 * invalid UTF-16 (lone surrogates, which would be invalid UTF-8 in Go) becomes U+FFFD.
 */
export function quoteJSON(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20) {
      switch (c) {
        case 0x08:
          out += '\\b';
          break;
        case 0x0c:
          out += '\\f';
          break;
        case 0x0a:
          out += '\\n';
          break;
        case 0x0d:
          out += '\\r';
          break;
        case 0x09:
          out += '\\t';
          break;
        default:
          out += '\\u00' + c.toString(16).padStart(2, '0');
      }
    } else if (c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16);
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else out += '\ufffd';
    } else if (c >= 0xdc00 && c <= 0xdfff) out += '\ufffd';
    else out += s[i]!;
  }
  return out + '"';
}
