/**
 * Request-body decoding with Go `encoding/json` semantics, as hashicorp/nomad command/agent/http.go
 * `decodeBody` does: field names are case-insensitive, unknown fields ignored; bad JSON → 400 with
 * the decoder error text.
 *
 * Nomad's handlers call `json.NewDecoder(req.Body).Decode(&out)`, so:
 * - only the first JSON value is read; trailing bytes are ignored;
 * - a syntax error yields Go's scanner text (`invalid character 'x' looking for beginning of
 *   value`, `unexpected EOF`, …); a body of only whitespace yields `EOF`;
 * - a type mismatch does not stop decoding; the first one is reported as
 *   `json: cannot unmarshal <what> into Go struct field <Struct>.<Path> of type <T>`;
 * - `null` leaves non-pointer values untouched; objects decoded twice into a map merge.
 *
 * Output values: struct → plain object with every field (zero values for absent ones), map →
 * `Map`, slice → array or null, pointer → value or null, ints → bigint, time → RFC3339 text|null.
 */

/** A Go type descriptor for the request structs the simulator decodes. */
export type GoType =
  | { k: 'string'; name: string }
  | { k: 'int'; name: string; bits: number; unsigned: boolean }
  | { k: 'bool' }
  | { k: 'time' }
  | { k: 'slice'; elem: GoType }
  | { k: 'map'; elem: GoType; name?: string }
  | { k: 'ptr'; elem: GoType }
  | { k: 'struct'; name: string; fields: Array<[string, GoType]> };

/** Decoding failed the way Go's decoder reports it; `message` is Go's `err.Error()`. */
export class GoDecodeError extends Error {}

export const goString: GoType = { k: 'string', name: 'string' };
export const goInt64: GoType = { k: 'int', name: 'int64', bits: 64, unsigned: false };
export const goInt: GoType = { k: 'int', name: 'int', bits: 64, unsigned: false };
export const goUint64: GoType = { k: 'int', name: 'uint64', bits: 64, unsigned: true };
export const goBool: GoType = { k: 'bool' };
const named = (name: string): GoType => ({ k: 'string', name });
const mapOf = (elem: GoType, name?: string): GoType =>
  name === undefined ? { k: 'map', elem } : { k: 'map', elem, name };
const sliceOf = (elem: GoType): GoType => ({ k: 'slice', elem });
const ptrTo = (elem: GoType): GoType => ({ k: 'ptr', elem });

const topology: GoType = { k: 'struct', name: 'CSITopology', fields: [['Segments', mapOf(goString)]] };
const capability: GoType = {
  k: 'struct',
  name: 'CSIVolumeCapability',
  fields: [
    ['AttachmentMode', named('structs.CSIVolumeAttachmentMode')],
    ['AccessMode', named('structs.CSIVolumeAccessMode')],
  ],
};
const allocation: GoType = { k: 'struct', name: 'Allocation', fields: [] };

/** `structs.CSIVolume` minus its `json:"-"` claim maps, in declaration order. */
export const csiVolumeType: GoType = {
  k: 'struct',
  name: 'CSIVolume',
  fields: [
    ['ID', goString],
    ['Name', goString],
    ['ExternalID', goString],
    ['Namespace', goString],
    [
      'RequestedTopologies',
      ptrTo({
        k: 'struct',
        name: 'CSITopologyRequest',
        fields: [
          ['Required', sliceOf(ptrTo(topology))],
          ['Preferred', sliceOf(ptrTo(topology))],
        ],
      }),
    ],
    ['Topologies', sliceOf(ptrTo(topology))],
    ['AccessMode', named('structs.CSIVolumeAccessMode')],
    ['AttachmentMode', named('structs.CSIVolumeAttachmentMode')],
    [
      'MountOptions',
      ptrTo({
        k: 'struct',
        name: 'CSIMountOptions',
        fields: [
          ['FSType', goString],
          ['MountFlags', sliceOf(goString)],
        ],
      }),
    ],
    ['Secrets', mapOf(goString, 'structs.CSISecrets')],
    ['Parameters', mapOf(goString)],
    ['Context', mapOf(goString)],
    ['Capacity', goInt64],
    ['RequestedCapacityMin', goInt64],
    ['RequestedCapacityMax', goInt64],
    ['RequestedCapabilities', sliceOf(ptrTo(capability))],
    ['CloneID', goString],
    ['SnapshotID', goString],
    ['ReadAllocs', mapOf(ptrTo(allocation))],
    ['WriteAllocs', mapOf(ptrTo(allocation))],
    ['Schedulable', goBool],
    ['PluginID', goString],
    ['Provider', goString],
    ['ProviderVersion', goString],
    ['ControllerRequired', goBool],
    ['ControllersHealthy', goInt],
    ['ControllersExpected', goInt],
    ['NodesHealthy', goInt],
    ['NodesExpected', goInt],
    ['ResourceExhausted', { k: 'time' }],
    ['CreateIndex', goUint64],
    ['ModifyIndex', goUint64],
    ['CreateTime', goInt64],
    ['ModifyTime', goInt64],
  ],
};

/** The WriteRequest fields embedded in every write request (decoded, then ignored). */
const writeRequestFields: Array<[string, GoType]> = [
  ['Region', goString],
  ['Namespace', goString],
  ['AuthToken', goString],
  ['IdempotencyToken', goString],
];

/** `structs.CSIVolumeRegisterRequest`. */
export const registerRequestType: GoType = {
  k: 'struct',
  name: 'CSIVolumeRegisterRequest',
  fields: [['Volumes', sliceOf(ptrTo(csiVolumeType))], ['PolicyOverride', goBool], ...writeRequestFields],
};

/** `structs.CSIVolumeCreateRequest`. */
export const createRequestType: GoType = {
  k: 'struct',
  name: 'CSIVolumeCreateRequest',
  fields: [['Volumes', sliceOf(ptrTo(csiVolumeType))], ['PolicyOverride', goBool], ...writeRequestFields],
};

/** `structs.CSISnapshotCreateRequest`. */
export const snapshotCreateRequestType: GoType = {
  k: 'struct',
  name: 'CSISnapshotCreateRequest',
  fields: [
    [
      'Snapshots',
      sliceOf(
        ptrTo({
          k: 'struct',
          name: 'CSISnapshot',
          fields: [
            ['ID', goString],
            ['ExternalSourceVolumeID', goString],
            ['SizeBytes', goInt64],
            ['CreateTime', goInt64],
            ['IsReady', goBool],
            ['SourceVolumeID', goString],
            ['PluginID', goString],
            ['Name', goString],
            ['Secrets', mapOf(goString, 'structs.CSISecrets')],
            ['Parameters', mapOf(goString)],
          ],
        }),
      ),
    ],
    ...writeRequestFields,
  ],
};

/** Go's `reflect.Type.String()` for a descriptor. */
export function typeString(t: GoType): string {
  switch (t.k) {
    case 'string':
    case 'int':
      return t.name;
    case 'bool':
      return 'bool';
    case 'time':
      return 'time.Time';
    case 'slice':
      return '[]' + typeString(t.elem);
    case 'map':
      return t.name ?? 'map[string]' + typeString(t.elem);
    case 'ptr':
      return '*' + typeString(t.elem);
    case 'struct':
      return 'structs.' + t.name;
  }
}

/** The zero value of a type, in this module's output representation. */
export function zeroValue(t: GoType): unknown {
  switch (t.k) {
    case 'string':
      return '';
    case 'int':
      return 0n;
    case 'bool':
      return false;
    case 'time':
    case 'slice':
    case 'map':
    case 'ptr':
      return null;
    case 'struct': {
      const o: Record<string, unknown> = {};
      for (const [name, ft] of t.fields) o[name] = zeroValue(ft);
      return o;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Syntax: a scanner that accepts exactly what Go's encoding/json scanner accepts and fails with
// its messages.

type JNode =
  | { t: 'obj'; entries: Array<[string, JNode]> }
  | { t: 'arr'; items: JNode[] }
  | { t: 'str'; v: string }
  | { t: 'num'; raw: string }
  | { t: 'bool'; v: boolean }
  | { t: 'null' };

class Unexpected extends Error {}

function quoteByte(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const specials: Record<number, string> = {
    7: '\\a',
    8: '\\b',
    12: '\\f',
    10: '\\n',
    13: '\\r',
    9: '\\t',
    11: '\\v',
    92: '\\\\',
  };
  const sp = specials[c];
  if (sp) return `'${sp}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if ((c >= 0x80 && c < 0xa0) || c === 0xa0 || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

class Scanner {
  i = 0;
  constructor(private readonly b: Buffer) {}

  private err(c: number, context: string): never {
    throw new GoDecodeError(`invalid character ${quoteByte(c)} ${context}`);
  }
  private peek(): number {
    if (this.i >= this.b.length) throw new Unexpected();
    return this.b[this.i]!;
  }
  private skip(): void {
    while (this.i < this.b.length) {
      const c = this.b[this.i]!;
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  top(): JNode {
    this.skip();
    if (this.i >= this.b.length) throw new GoDecodeError('EOF');
    try {
      return this.value();
    } catch (e) {
      if (e instanceof Unexpected) throw new GoDecodeError('unexpected EOF');
      throw e;
    }
  }

  private value(): JNode {
    this.skip();
    const c = this.peek();
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return { t: 'str', v: this.string() };
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return { t: 'num', raw: this.number() };
    if (c === 0x74) return this.literal('true', { t: 'bool', v: true });
    if (c === 0x66) return this.literal('false', { t: 'bool', v: false });
    if (c === 0x6e) return this.literal('null', { t: 'null' });
    return this.err(c, 'looking for beginning of value');
  }

  private literal(word: string, node: JNode): JNode {
    this.i++;
    for (let k = 1; k < word.length; k++) {
      const c = this.peek();
      if (c !== word.charCodeAt(k)) this.err(c, `in literal ${word} (expecting '${word[k]}')`);
      this.i++;
    }
    return node;
  }

  private object(): JNode {
    this.i++;
    const entries: Array<[string, JNode]> = [];
    this.skip();
    let c = this.peek();
    if (c === 0x7d) {
      this.i++;
      return { t: 'obj', entries };
    }
    for (;;) {
      if (c !== 0x22) this.err(c, 'looking for beginning of object key string');
      const key = this.string();
      this.skip();
      c = this.peek();
      if (c !== 0x3a) this.err(c, 'after object key');
      this.i++;
      const v = this.value();
      entries.push([key, v]);
      this.skip();
      c = this.peek();
      if (c === 0x2c) {
        this.i++;
        this.skip();
        c = this.peek();
        continue;
      }
      if (c === 0x7d) {
        this.i++;
        return { t: 'obj', entries };
      }
      this.err(c, 'after object key:value pair');
    }
  }

  private array(): JNode {
    this.i++;
    const items: JNode[] = [];
    this.skip();
    if (this.peek() === 0x5d) {
      this.i++;
      return { t: 'arr', items };
    }
    for (;;) {
      items.push(this.value());
      this.skip();
      const c = this.peek();
      if (c === 0x2c) {
        this.i++;
        continue;
      }
      if (c === 0x5d) {
        this.i++;
        return { t: 'arr', items };
      }
      this.err(c, 'after array element');
    }
  }

  private string(): string {
    this.i++;
    const parts: Buffer[] = [];
    let start = this.i;
    for (;;) {
      const c = this.peek();
      if (c === 0x22) {
        parts.push(this.b.subarray(start, this.i));
        this.i++;
        return Buffer.concat(parts).toString('utf8');
      }
      if (c < 0x20) this.err(c, 'in string literal');
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      parts.push(this.b.subarray(start, this.i));
      this.i++;
      const e = this.peek();
      const simple: Record<number, string> = {
        0x22: '"',
        0x5c: '\\',
        0x2f: '/',
        0x62: '\b',
        0x66: '\f',
        0x6e: '\n',
        0x72: '\r',
        0x74: '\t',
      };
      if (simple[e] !== undefined) {
        parts.push(Buffer.from(simple[e], 'utf8'));
        this.i++;
      } else if (e === 0x75) {
        this.i++;
        let code = this.hex4();
        if (code >= 0xd800 && code < 0xdc00) {
          // A surrogate pair is combined when the next escape is its low half.
          const save = this.i;
          if (this.b[this.i] === 0x5c && this.b[this.i + 1] === 0x75) {
            this.i += 2;
            const lo = this.hex4();
            if (lo >= 0xdc00 && lo < 0xe000) code = 0x10000 + ((code - 0xd800) << 10) + (lo - 0xdc00);
            else {
              this.i = save;
              code = 0xfffd;
            }
          } else code = 0xfffd;
        } else if (code >= 0xdc00 && code < 0xe000) code = 0xfffd;
        parts.push(Buffer.from(String.fromCodePoint(code), 'utf8'));
      } else this.err(e, 'in string escape code');
      start = this.i;
    }
  }

  private hex4(): number {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.peek();
      const d = parseInt(String.fromCharCode(c), 16);
      if (Number.isNaN(d)) this.err(c, 'in \\u hexadecimal character escape');
      v = v * 16 + d;
      this.i++;
    }
    return v;
  }

  private number(): string {
    const start = this.i;
    const digit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
    if (this.b[this.i] === 0x2d) {
      this.i++;
      const c = this.peek();
      if (!digit(c)) this.err(c, 'in numeric literal');
    }
    if (this.b[this.i] === 0x30) this.i++;
    else while (digit(this.b[this.i])) this.i++;
    if (this.b[this.i] === 0x2e) {
      this.i++;
      const c = this.peek();
      if (!digit(c)) this.err(c, 'after decimal point in numeric literal');
      while (digit(this.b[this.i])) this.i++;
    }
    const e = this.b[this.i];
    if (e === 0x65 || e === 0x45) {
      this.i++;
      let c = this.peek();
      if (c === 0x2b || c === 0x2d) {
        this.i++;
        c = this.peek();
      }
      if (!digit(c)) this.err(c, 'in exponent of numeric literal');
      while (digit(this.b[this.i])) this.i++;
    }
    return this.b.subarray(start, this.i).toString('latin1');
  }
}

// ---------------------------------------------------------------------------------------------
// Typed decoding.

interface ErrCtx {
  struct: string | null;
  fields: string[];
}

class TypedDecoder {
  firstTypeError: string | null = null;

  private typeError(what: string, t: GoType, ctx: ErrCtx): void {
    if (this.firstTypeError !== null) return;
    const type = typeString(t);
    this.firstTypeError =
      ctx.struct === null && ctx.fields.length === 0
        ? `json: cannot unmarshal ${what} into Go value of type ${type}`
        : `json: cannot unmarshal ${what} into Go struct field ${ctx.struct}.${ctx.fields.join('.')} of type ${type}`;
  }

  /** Decodes `n` into a value of type `t`; `cur` is the existing value (Go decodes in place). */
  decode(n: JNode, t: GoType, cur: unknown, ctx: ErrCtx): unknown {
    if (n.t === 'null') {
      return t.k === 'ptr' || t.k === 'slice' || t.k === 'map' ? null : cur;
    }
    if (t.k === 'ptr') {
      const inner = cur === null || cur === undefined ? zeroValue(t.elem) : cur;
      // A type error on a pointer is reported against the pointed-to type (Go's indirect()).
      return this.decode(n, t.elem, inner, ctx);
    }
    if (t.k === 'time') {
      if (n.t !== 'str') throw new GoDecodeError('Time.UnmarshalJSON: input is not a JSON string');
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(n.v)) {
        throw new GoDecodeError(
          `parsing time ${JSON.stringify(n.v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(n.v)} as "2006"`,
        );
      }
      return n.v;
    }
    switch (n.t) {
      case 'str':
        if (t.k === 'string') return n.v;
        this.typeError('string', t, ctx);
        return cur;
      case 'bool':
        if (t.k === 'bool') return n.v;
        this.typeError('bool', t, ctx);
        return cur;
      case 'num':
        if (t.k === 'int') {
          if (!/^-?\d+$/.test(n.raw)) {
            this.typeError(`number ${n.raw}`, t, ctx);
            return cur;
          }
          const v = BigInt(n.raw);
          const lo = t.unsigned ? 0n : -(1n << BigInt(t.bits - 1));
          const hi = t.unsigned ? (1n << BigInt(t.bits)) - 1n : (1n << BigInt(t.bits - 1)) - 1n;
          if (v < lo || v > hi) {
            this.typeError(`number ${n.raw}`, t, ctx);
            return cur;
          }
          return v;
        }
        this.typeError('number', t, ctx);
        return cur;
      case 'arr': {
        if (t.k !== 'slice') {
          this.typeError('array', t, ctx);
          return cur;
        }
        return n.items.map((item) => this.decode(item, t.elem, zeroValue(t.elem), ctx));
      }
      case 'obj': {
        if (t.k === 'map') {
          const m = cur instanceof Map ? (cur as Map<string, unknown>) : new Map<string, unknown>();
          for (const [k, v] of n.entries) m.set(k, this.decode(v, t.elem, zeroValue(t.elem), ctx));
          return m;
        }
        if (t.k === 'struct') {
          const o = (cur && typeof cur === 'object' ? cur : zeroValue(t)) as Record<string, unknown>;
          for (const [k, v] of n.entries) {
            const field =
              t.fields.find(([name]) => name === k) ??
              t.fields.find(([name]) => name.toLowerCase() === k.toLowerCase());
            if (!field) continue; // unknown fields are ignored
            const [name, ft] = field;
            o[name] = this.decode(v, ft, o[name], { struct: t.name, fields: [...ctx.fields, name] });
          }
          return o;
        }
        this.typeError('object', t, ctx);
        return cur;
      }
    }
  }
}

/**
 * Decodes a request body like `json.NewDecoder(body).Decode(&out)` into type `t` (a struct).
 * Throws GoDecodeError with Go's message on failure.
 */
export function decodeGoJSON(body: Buffer, t: GoType): Record<string, unknown> {
  const node = new Scanner(body).top();
  const dec = new TypedDecoder();
  const out = dec.decode(node, t, zeroValue(t), { struct: null, fields: [] });
  if (dec.firstTypeError !== null) throw new GoDecodeError(dec.firstTypeError);
  // A top-level `null` leaves the request struct at its zero value.
  return (out ?? zeroValue(t)) as Record<string, unknown>;
}
