/**
 * go-bexpr, the `?filter=` language of Nomad list endpoints (hashicorp/go-bexpr; Nomad's API docs,
 * "Filtering").
 *
 * Parsing follows go-bexpr's PEG grammar (grammar/grammar.peg, the version without inline `[…]`
 * value lists that Nomad's pinned v0.1.13 ships) and reproduces how the pigeon-generated parser
 * reports failures, because Nomad returns that text verbatim in its 400:
 * `<line>:<col> (<offset>): no match found, expected: "==", … or [a-zA-Z]`, or
 * `<line>:<col> (<offset>): rule "number": Invalid number literal` for grammar predicates.
 * Note the grammar itself: a double-quoted string ends at the first `"` (a `\"` escape is not
 * supported by go-bexpr; use a backtick string), and `"…"` holding only `/segments` is a JSON
 * pointer selector, not a string.
 *
 * Evaluation follows go-bexpr's evaluate.go over a reflection view of the Go value (`GoVal`),
 * walking selectors like mitchellh/pointerstructure: struct fields by exact Go name, map keys,
 * slice indexes. A missing map key at the leaf yields the operator's "not present disposition"
 * (go-bexpr ≥ 0.1.12); a missing struct field is an error.
 */
import { goCompare, goQuote, GoParseError, parseBool, parseGoFloat, parseGoInt } from './golang';

// ---------------------------------------------------------------------------------------------
// AST

export type MatchOp = 'Equal' | 'NotEqual' | 'In' | 'NotIn' | 'IsEmpty' | 'IsNotEmpty' | 'Matches' | 'NotMatches';

export interface Selector {
  type: 'bexpr' | 'jsonpointer';
  path: string[];
}

export type Expr =
  | { type: 'not'; operand: Expr }
  | { type: 'and' | 'or'; left: Expr; right: Expr }
  | { type: 'match'; selector: Selector; op: MatchOp; value: string | null };

/** A filter expression that does not parse; `message` is go-bexpr's parse error text. */
export class BexprParseError extends Error {}

/** `selector.String()`: dotted for bexpr selectors, slash-joined for JSON pointers. */
export function selectorString(s: Selector): string {
  if (s.path.length === 0) return '';
  return s.path.join(s.type === 'bexpr' ? '.' : '/');
}

// ---------------------------------------------------------------------------------------------
// Parser

const FAIL = Symbol('fail');
type Res<T> = T | typeof FAIL;
/** Thrown (the one instance) to end the parse, as pigeon's panic does; caught by identity. */
const ABORT = new Error('bexpr parse aborted');

const WS_CLASS = '[ \\t\\r\\n]';

function isWs(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}
function isAlpha(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

class PegParser {
  private readonly cps: string[];
  private readonly pos: Array<{ line: number; col: number; offset: number }> = [];
  private i = 0;
  private maxFail = -1;
  private expected: string[] = [];
  private invert = false;
  private readonly errs: string[] = [];
  private readonly rstack: string[] = [];

  constructor(input: string) {
    this.cps = [...input];
    let line = 1;
    let col = 0;
    let offset = 0;
    for (let k = 0; k <= this.cps.length; k++) {
      // pigeon's read(): the column counts the rune being looked at; a newline moves to the
      // next line at column 0; reading past the end still increments the column.
      col++;
      const ch = this.cps[k];
      if (ch === '\n') {
        line++;
        col = 0;
      }
      this.pos.push({ line, col, offset });
      if (ch !== undefined) offset += Buffer.byteLength(ch, 'utf8');
    }
  }

  private posText(k: number): string {
    const p = this.pos[k]!;
    return `${p.line}:${p.col} (${p.offset})`;
  }

  private addErrAt(msg: string, at: number): void {
    const rule = this.rstack.length > 0 ? `: rule ${this.rstack[this.rstack.length - 1]}` : '';
    this.errs.push(`${this.posText(at)}${rule}: ${msg}`);
  }

  private failAt(matched: boolean, at: number, want: string): void {
    if (matched !== this.invert) return;
    if (at < this.maxFail) return;
    if (at > this.maxFail) {
      this.maxFail = at;
      this.expected = [];
    }
    this.expected.push(this.invert ? '!' + want : want);
  }

  // --- terminals -------------------------------------------------------------------------------

  private lit(s: string): Res<string> {
    const start = this.i;
    const want = goQuote(s);
    const chars = [...s];
    for (let k = 0; k < chars.length; k++) {
      if (this.cps[start + k] !== chars[k]) {
        this.failAt(false, start, want);
        return FAIL;
      }
    }
    this.i = start + chars.length;
    this.failAt(true, start, want);
    return s;
  }

  private cls(test: (c: string) => boolean, want: string): Res<string> {
    const c = this.cps[this.i];
    if (c === undefined || !test(c)) {
      this.failAt(false, this.i, want);
      return FAIL;
    }
    this.failAt(true, this.i, want);
    this.i++;
    return c;
  }

  private any(): Res<string> {
    const c = this.cps[this.i];
    if (c === undefined) {
      this.failAt(false, this.i, '.');
      return FAIL;
    }
    this.failAt(true, this.i, '.');
    this.i++;
    return c;
  }

  // --- combinators -----------------------------------------------------------------------------

  private rule<T>(display: string, fn: () => Res<T>): Res<T> {
    this.rstack.push(display);
    try {
      return fn();
    } finally {
      this.rstack.pop();
    }
  }

  /** Runs `fn`; on failure rewinds to where it started. */
  private attempt<T>(fn: () => Res<T>): Res<T> {
    const start = this.i;
    const r = fn();
    if (r === FAIL) this.i = start;
    return r;
  }

  private not(fn: () => Res<unknown>): boolean {
    const start = this.i;
    this.invert = !this.invert;
    const r = fn();
    this.invert = !this.invert;
    this.i = start;
    return r === FAIL;
  }

  private and(fn: () => Res<unknown>): boolean {
    const start = this.i;
    const r = fn();
    this.i = start;
    return r !== FAIL;
  }

  private star(fn: () => Res<unknown>): void {
    for (;;) {
      const start = this.i;
      if (this.attempt(fn) === FAIL || this.i === start) return;
    }
  }

  private text(from: number): string {
    return this.cps.slice(from, this.i).join('');
  }

  // --- grammar ---------------------------------------------------------------------------------

  private ws(): Res<true> {
    return this.rule('"whitespace"', () => {
      if (this.cls(isWs, WS_CLASS) === FAIL) return FAIL;
      while (this.attempt(() => this.cls(isWs, WS_CLASS)) !== FAIL);
      return true as const;
    });
  }

  private optWs(): void {
    this.attempt(() => this.ws());
  }

  private eof(): Res<true> {
    return this.rule('EOF', () => (this.not(() => this.any()) ? (true as const) : FAIL));
  }

  parseInput(): Expr {
    let result: Res<Expr>;
    try {
      result = this.rule('Input', () => {
        const a1 = this.attempt(() => {
          this.optWs();
          if (this.lit('(') === FAIL) return FAIL;
          this.optWs();
          const e = this.orExpr();
          if (e === FAIL) return FAIL;
          this.optWs();
          if (this.lit(')') === FAIL) return FAIL;
          this.optWs();
          if (this.eof() === FAIL) return FAIL;
          return e;
        });
        if (a1 !== FAIL) return a1;
        return this.attempt(() => {
          this.optWs();
          const e = this.orExpr();
          if (e === FAIL) return FAIL;
          this.optWs();
          if (this.eof() === FAIL) return FAIL;
          return e;
        });
      });
    } catch (e) {
      if (e !== ABORT) throw e;
      result = FAIL;
    }
    if (result === FAIL && this.errs.length === 0) {
      const set = new Set(this.expected);
      const eof = set.delete('!.');
      const list = [...set].sort(goCompare);
      if (eof) list.push('EOF');
      const joined = list.length <= 1 ? list.join('') : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
      this.errs.push(`${this.posText(Math.max(this.maxFail, 0))}: no match found, expected: ${joined}`);
    }
    if (this.errs.length > 0) throw new BexprParseError([...new Set(this.errs)].join('\n'));
    return result as Expr;
  }

  private orExpr(): Res<Expr> {
    return this.rule('OrExpression', () => {
      const a1 = this.attempt((): Res<Expr> => {
        const left = this.andExpr();
        if (left === FAIL || this.ws() === FAIL || this.lit('or') === FAIL || this.ws() === FAIL) return FAIL;
        const right = this.orExpr();
        if (right === FAIL) return FAIL;
        return { type: 'or', left, right };
      });
      if (a1 !== FAIL) return a1;
      return this.attempt(() => this.andExpr());
    });
  }

  private andExpr(): Res<Expr> {
    return this.rule('AndExpression', () => {
      const a1 = this.attempt((): Res<Expr> => {
        const left = this.notExpr();
        if (left === FAIL || this.ws() === FAIL || this.lit('and') === FAIL || this.ws() === FAIL) return FAIL;
        const right = this.andExpr();
        if (right === FAIL) return FAIL;
        return { type: 'and', left, right };
      });
      if (a1 !== FAIL) return a1;
      return this.attempt(() => this.notExpr());
    });
  }

  private notExpr(): Res<Expr> {
    return this.rule('NotExpression', () => {
      const a1 = this.attempt((): Res<Expr> => {
        if (this.lit('not') === FAIL || this.ws() === FAIL) return FAIL;
        const e = this.notExpr();
        if (e === FAIL) return FAIL;
        // go-bexpr collapses `not not x` to `x`.
        if (e.type === 'not') return e.operand;
        return { type: 'not', operand: e };
      });
      if (a1 !== FAIL) return a1;
      return this.attempt(() => this.parenExpr());
    });
  }

  private parenExpr(): Res<Expr> {
    return this.rule('"grouping"', () => {
      const a1 = this.attempt((): Res<Expr> => {
        if (this.lit('(') === FAIL) return FAIL;
        this.optWs();
        const e = this.orExpr();
        if (e === FAIL) return FAIL;
        this.optWs();
        if (this.lit(')') === FAIL) return FAIL;
        return e;
      });
      if (a1 !== FAIL) return a1;
      const a2 = this.attempt(() => this.matchExpr());
      if (a2 !== FAIL) return a2;
      return this.attempt((): Res<Expr> => {
        if (this.lit('(') === FAIL) return FAIL;
        this.optWs();
        if (this.orExpr() === FAIL) return FAIL;
        this.optWs();
        if (!this.not(() => this.lit(')'))) return FAIL;
        this.addErrAt('Unmatched parentheses', this.i);
        return FAIL;
      });
    });
  }

  private matchExpr(): Res<Expr> {
    return this.rule('"match"', () => {
      const a1 = this.attempt(() => this.matchSelectorOpValue());
      if (a1 !== FAIL) return a1;
      const a2 = this.attempt(() => this.matchSelectorOp());
      if (a2 !== FAIL) return a2;
      return this.attempt(() => this.matchValueOpSelector());
    });
  }

  private matchSelectorOpValue(): Res<Expr> {
    return this.rule('"match"', () => {
      const selector = this.selector();
      if (selector === FAIL) return FAIL;
      const op = this.firstOf<MatchOp>([
        () => this.opSym('==', 'Equal'),
        () => this.opSym('!=', 'NotEqual'),
        () => this.opWords(['contains'], 'In'),
        () => this.opWords(['not', 'contains'], 'NotIn'),
        () => this.opWords(['matches'], 'Matches'),
        () => this.opWords(['not', 'matches'], 'NotMatches'),
      ]);
      if (op === FAIL) return FAIL;
      const value = this.value();
      if (value === FAIL) return FAIL;
      return { type: 'match', selector, op, value };
    });
  }

  private matchSelectorOp(): Res<Expr> {
    return this.rule('"match"', () => {
      const selector = this.selector();
      if (selector === FAIL) return FAIL;
      const op = this.firstOf<MatchOp>([
        () => this.opWords(['is', 'empty'], 'IsEmpty', false),
        () => this.opWords(['is', 'not', 'empty'], 'IsNotEmpty', false),
      ]);
      if (op === FAIL) return FAIL;
      return { type: 'match', selector, op, value: null };
    });
  }

  private matchValueOpSelector(): Res<Expr> {
    return this.rule('"match"', () => {
      const inOps = (): Res<MatchOp> =>
        this.firstOf<MatchOp>([() => this.opWords(['in'], 'In'), () => this.opWords(['not', 'in'], 'NotIn')]);
      const a1 = this.attempt((): Res<Expr> => {
        const value = this.value();
        if (value === FAIL) return FAIL;
        const op = inOps();
        if (op === FAIL) return FAIL;
        const selector = this.selector();
        if (selector === FAIL) return FAIL;
        return { type: 'match', selector, op, value };
      });
      if (a1 !== FAIL) return a1;
      return this.attempt((): Res<Expr> => {
        if (this.value() === FAIL) return FAIL;
        if (inOps() === FAIL) return FAIL;
        if (!this.not(() => this.selector())) return FAIL;
        this.addErrAt('Invalid selector', this.i);
        return FAIL;
      });
    });
  }

  private firstOf<T>(alts: Array<() => Res<T>>): Res<T> {
    for (const alt of alts) {
      const r = this.attempt(alt);
      if (r !== FAIL) return r;
    }
    return FAIL;
  }

  /** `_? "==" _?` style operators. */
  private opSym(sym: string, op: MatchOp): Res<MatchOp> {
    return this.rule(op === 'Equal' ? 'MatchEqual' : 'MatchNotEqual', () => {
      this.optWs();
      if (this.lit(sym) === FAIL) return FAIL;
      this.optWs();
      return op;
    });
  }

  /** `_ "not" _ "in" _` style operators; `trailing` is false for the `is [not] empty` ones. */
  private opWords(words: string[], op: MatchOp, trailing = true): Res<MatchOp> {
    return this.rule(`Match${op}`, () => {
      for (const w of words) {
        if (this.ws() === FAIL || this.lit(w) === FAIL) return FAIL;
      }
      if (trailing && this.ws() === FAIL) return FAIL;
      return op;
    });
  }

  private selector(): Res<Selector> {
    return this.rule('"selector"', () => {
      const a1 = this.attempt((): Res<Selector> => {
        const first = this.identifier();
        if (first === FAIL) return FAIL;
        const path = [first];
        for (;;) {
          const r = this.attempt(() => this.selectorOrIndex());
          if (r === FAIL) break;
          path.push(r);
        }
        return { type: 'bexpr', path };
      });
      if (a1 !== FAIL) return a1;
      return this.attempt((): Res<Selector> => {
        if (this.lit('"') === FAIL) return FAIL;
        const segs: string[] = [];
        for (;;) {
          const r = this.attempt(() => this.jsonPointerSegment());
          if (r === FAIL) break;
          segs.push(r);
        }
        if (this.lit('"') === FAIL) return FAIL;
        // pointerstructure.Parse("/" + segments) unescapes ~1 and ~0.
        const parts = ('/' + segs.join('/'))
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        return { type: 'jsonpointer', path: parts };
      });
    });
  }

  private jsonPointerSegment(): Res<string> {
    return this.rule('JsonPointerSegment', () => {
      const start = this.i;
      if (this.lit('/') === FAIL) return FAIL;
      const want = '[\\pL\\pN-_.~:|]';
      const test = (c: string): boolean => /[\p{L}\p{N}\-_.~:|]/u.test(c);
      if (this.cls(test, want) === FAIL) return FAIL;
      while (this.attempt(() => this.cls(test, want)) !== FAIL);
      return this.text(start).slice(1);
    });
  }

  private identifier(): Res<string> {
    return this.rule('Identifier', () => {
      const start = this.i;
      if (this.cls(isAlpha, '[a-zA-Z]') === FAIL) return FAIL;
      const rest = (c: string): boolean => isAlpha(c) || isDigit(c) || c === '_' || c === '/';
      while (this.attempt(() => this.cls(rest, '[a-zA-Z0-9_/]')) !== FAIL);
      return this.text(start);
    });
  }

  private selectorOrIndex(): Res<string> {
    return this.rule('SelectorOrIndex', () => {
      const a1 = this.attempt((): Res<string> => {
        if (this.lit('.') === FAIL) return FAIL;
        return this.identifier();
      });
      if (a1 !== FAIL) return a1;
      const a2 = this.attempt(() => this.indexExpr());
      if (a2 !== FAIL) return a2;
      return this.attempt((): Res<string> => {
        const start = this.i;
        if (this.lit('.') === FAIL) return FAIL;
        if (this.cls(isDigit, '[0-9]') === FAIL) return FAIL;
        while (this.attempt(() => this.cls(isDigit, '[0-9]')) !== FAIL);
        return this.text(start).slice(1);
      });
    });
  }

  private indexExpr(): Res<string> {
    return this.rule('"index"', () => {
      const a1 = this.attempt((): Res<string> => {
        if (this.lit('[') === FAIL) return FAIL;
        this.optWs();
        const s = this.stringLiteral();
        if (s === FAIL) return FAIL;
        this.optWs();
        if (this.lit(']') === FAIL) return FAIL;
        return s ?? '';
      });
      if (a1 !== FAIL) return a1;
      const a2 = this.attempt((): Res<string> => {
        if (this.lit('[') === FAIL) return FAIL;
        this.optWs();
        if (!this.not(() => this.stringLiteral())) return FAIL;
        this.addErrAt('Invalid index', this.i);
        return FAIL;
      });
      if (a2 !== FAIL) return a2;
      return this.attempt((): Res<string> => {
        if (this.lit('[') === FAIL) return FAIL;
        this.optWs();
        if (this.stringLiteral() === FAIL) return FAIL;
        this.optWs();
        if (!this.not(() => this.lit(']'))) return FAIL;
        this.addErrAt('Unclosed index expression', this.i);
        return FAIL;
      });
    });
  }

  private value(): Res<string> {
    return this.rule('"value"', () => {
      const a1 = this.attempt(() => this.selector());
      if (a1 !== FAIL) return selectorString(a1);
      const a2 = this.attempt(() => this.numberLiteral());
      if (a2 !== FAIL) return a2;
      const a3 = this.attempt(() => this.stringLiteral());
      if (a3 === FAIL) return FAIL;
      if (a3 === null) {
        // The string action failed (its error is recorded) and left a nil value; the generated
        // code's `s.(string)` then panics and pigeon turns the panic into an error.
        this.addErrAt('interface conversion: interface {} is nil, not string', this.i);
        throw ABORT;
      }
      return a3;
    });
  }

  private numberLiteral(): Res<string> {
    return this.rule('"number"', () => {
      const a1 = this.attempt((): Res<string> => {
        const start = this.i;
        this.attempt(() => this.lit('-'));
        if (this.integerOrFloat() === FAIL) return FAIL;
        if (!this.and(() => this.afterNumbers())) return FAIL;
        return this.text(start);
      });
      if (a1 !== FAIL) return a1;
      return this.attempt((): Res<string> => {
        this.attempt(() => this.lit('-'));
        if (this.integerOrFloat() === FAIL) return FAIL;
        if (!this.not(() => this.afterNumbers())) return FAIL;
        this.addErrAt('Invalid number literal', this.i);
        return FAIL;
      });
    });
  }

  private afterNumbers(): Res<true> {
    return this.rule('AfterNumbers', () => {
      const ok = this.and(() => this.firstOf<unknown>([() => this.ws(), () => this.eof(), () => this.lit(')')]));
      return ok ? (true as const) : FAIL;
    });
  }

  private integerOrFloat(): Res<true> {
    return this.rule('IntegerOrFloat', () => {
      const intPart = this.firstOf<unknown>([
        () => this.lit('0'),
        () => {
          if (this.cls((c) => c >= '1' && c <= '9', '[1-9]') === FAIL) return FAIL;
          while (this.attempt(() => this.cls(isDigit, '[0-9]')) !== FAIL);
          return true;
        },
      ]);
      if (intPart === FAIL) return FAIL;
      this.attempt(() => {
        if (this.lit('.') === FAIL) return FAIL;
        if (this.cls(isDigit, '[0-9]') === FAIL) return FAIL;
        while (this.attempt(() => this.cls(isDigit, '[0-9]')) !== FAIL);
        return true;
      });
      return true as const;
    });
  }

  /** Returns the unquoted string, or null when the action's strconv.Unquote failed. */
  private stringLiteral(): Res<string | null> {
    return this.rule('"string"', () => {
      const a1 = this.attempt((): Res<string | null> => {
        const start = this.i;
        const body = this.firstOf<unknown>([
          () => {
            if (this.lit('`') === FAIL) return FAIL;
            this.star(() => (this.not(() => this.lit('`')) ? this.any() : FAIL));
            return this.lit('`');
          },
          () => {
            if (this.lit('"') === FAIL) return FAIL;
            this.star(() => (this.not(() => this.lit('"')) ? this.any() : FAIL));
            return this.lit('"');
          },
        ]);
        if (body === FAIL) return FAIL;
        const unquoted = goUnquote(this.text(start));
        if (unquoted === null) {
          this.addErrAt('invalid syntax', start);
          return null;
        }
        return unquoted;
      });
      if (a1 !== FAIL) return a1;
      return this.attempt((): Res<string | null> => {
        const body = this.firstOf<unknown>([
          () => {
            if (this.lit('`') === FAIL) return FAIL;
            this.star(() => (this.not(() => this.lit('`')) ? this.any() : FAIL));
            return true;
          },
          () => {
            if (this.lit('"') === FAIL) return FAIL;
            this.star(() => (this.not(() => this.lit('"')) ? this.any() : FAIL));
            return true;
          },
        ]);
        if (body === FAIL) return FAIL;
        if (this.eof() === FAIL) return FAIL;
        this.addErrAt('Unterminated string literal', this.i);
        return FAIL;
      });
    });
  }
}

/** `strconv.Unquote` for back-quoted and double-quoted Go literals; null on ErrSyntax. */
export function goUnquote(text: string): string | null {
  if (text.length < 2) return null;
  const q = text[0];
  if (q !== text[text.length - 1]) return null;
  const body = text.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) return null;
    return body.replace(/\r/g, '');
  }
  if (q !== '"') return null;
  let out = '';
  for (let k = 0; k < body.length; k++) {
    const c = body[k]!;
    if (c === '"' || c === '\n') return null;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++k];
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
      '"': '"',
    };
    if (e === undefined) return null;
    if (simple[e] !== undefined) {
      out += simple[e];
      continue;
    }
    const hexLen = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (hexLen > 0) {
      const hex = body.slice(k + 1, k + 1 + hexLen);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLen}}$`).test(hex)) return null;
      const v = parseInt(hex, 16);
      if (e !== 'x' && (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))) return null;
      out += String.fromCodePoint(v);
      k += hexLen;
      continue;
    }
    if (e >= '0' && e <= '7') {
      const oct = body.slice(k, k + 3);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return null;
      out += String.fromCharCode(parseInt(oct, 8));
      k += 2;
      continue;
    }
    return null;
  }
  return out;
}

/** Parses a filter expression, throwing BexprParseError with go-bexpr's message. */
export function parseBexpr(input: string): Expr {
  return new PegParser(input).parseInput();
}

// ---------------------------------------------------------------------------------------------
// Reflection view

/**
 * A Go value as `reflect` sees it. `type` is the Go type string (`reflect.Type.String()`), `rk`
 * the reflect kind name of scalars (`string`, `int`, `int64`, `uint64`, `bool`, `float64`).
 */
export type GoVal =
  | { kind: 'string'; type: string; v: string }
  | { kind: 'int'; type: string; rk: string; v: bigint }
  | { kind: 'uint'; type: string; rk: string; v: bigint }
  | { kind: 'bool'; type: string; v: boolean }
  | { kind: 'float'; type: string; v: number }
  | { kind: 'struct'; type: string; fields: Array<[string, GoVal]> }
  | { kind: 'map'; type: string; entries: Array<[string, GoVal]> | null }
  | { kind: 'slice'; type: string; elemType: string; elemKind: string; items: GoVal[] | null }
  | { kind: 'ptr'; type: string; elem: GoVal | null };

/** A runtime evaluation error (Nomad: 400 `failed to read result page: <message>`). */
export class BexprEvalError extends Error {}

/**
 * A Go panic during evaluation (e.g. `is empty` on an int). Nomad has no recover around RPC
 * handlers; the simulator reports it as a 500 with the panic text instead of crashing.
 */
export class BexprPanic extends Error {}

function reflectKind(v: GoVal | null): string {
  if (v === null) return 'invalid';
  switch (v.kind) {
    case 'string':
      return 'string';
    case 'int':
    case 'uint':
      return v.rk;
    case 'bool':
      return 'bool';
    case 'float':
      return 'float64';
    case 'struct':
      return 'struct';
    case 'map':
      return 'map';
    case 'slice':
      return 'slice';
    case 'ptr':
      return 'ptr';
  }
}

class NotFound extends Error {}

function pointerString(parts: string[]): string {
  if (parts.length === 0) return '';
  return '/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** pointerstructure's Get. Throws NotFound (ErrNotFound-wrapped) or BexprEvalError. */
function pointerGet(datum: GoVal, parts: string[]): GoVal {
  const p = pointerString(parts);
  let cur: GoVal | null = datum;
  parts.forEach((part, i) => {
    while (cur !== null && cur.kind === 'ptr') cur = cur.elem;
    if (cur === null) throw new BexprEvalError(`${p}: at part ${i}, invalid value kind: invalid`);
    const c: GoVal = cur;
    switch (c.kind) {
      case 'struct': {
        const f = c.fields.find(([name]) => name === part);
        if (!f) throw new NotFound(`${p} at part ${i}: couldn't find key: struct field with name ${goQuote(part)}`);
        cur = f[1];
        return;
      }
      case 'map': {
        const e = c.entries?.find(([k]) => k === part);
        if (!e) throw new NotFound(`${p} at part ${i}: couldn't find key ${goQuote(part)}`);
        cur = e[1];
        return;
      }
      case 'slice': {
        let idx: bigint;
        try {
          idx = parseGoInt(part, 0, 64, false);
        } catch {
          throw new BexprEvalError(`${p} at part ${i}: couldn't convert value ${goQuote(part)} to type int`);
        }
        const len = c.items?.length ?? 0;
        if (idx < 0n || idx >= BigInt(len)) {
          throw new BexprEvalError(`${p} at part ${i}: index ${idx} is out of range (length = ${len})`);
        }
        cur = c.items![Number(idx)]!;
        return;
      }
      default:
        throw new BexprEvalError(`${p}: at part ${i}, invalid value kind: ${reflectKind(c)}`);
    }
  });
  return cur;
}

const NOT_PRESENT: Record<MatchOp, boolean> = {
  Equal: false,
  NotEqual: true,
  In: false,
  NotIn: true,
  IsEmpty: true,
  IsNotEmpty: false,
  Matches: false,
  NotMatches: true,
};

/** Coerces the expression's raw value for a target kind (getMatchExprValue). */
function coerce(raw: string, kind: string): string | bigint | boolean | number {
  try {
    switch (kind) {
      case 'bool':
        return parseBool(raw);
      case 'int':
      case 'int8':
      case 'int16':
      case 'int32':
      case 'int64':
        return parseGoInt(raw, 0, 64, false);
      case 'uint':
      case 'uint8':
      case 'uint16':
      case 'uint32':
      case 'uint64':
        return parseGoInt(raw, 0, 64, true);
      case 'float32':
        return parseGoFloat(raw, 32);
      case 'float64':
        return parseGoFloat(raw, 64);
      default:
        return raw;
    }
  } catch (e) {
    if (e instanceof GoParseError) throw new BexprEvalError(`error getting match value in expression: ${e.message}`);
    throw e;
  }
}

function primitiveEqual(match: string | bigint | boolean | number, v: GoVal | null): boolean {
  if (v === null) return false;
  switch (v.kind) {
    case 'string':
    case 'bool':
    case 'float':
    case 'int':
    case 'uint':
      return match === v.v;
    default:
      return false;
  }
}

function isPrimitiveKind(kind: string): boolean {
  return [
    'bool',
    'string',
    'int',
    'int8',
    'int16',
    'int32',
    'int64',
    'uint',
    'uint8',
    'uint16',
    'uint32',
    'uint64',
    'float32',
    'float64',
  ].includes(kind);
}

function indirect(v: GoVal): GoVal | null {
  return v.kind === 'ptr' ? v.elem : v;
}

function goLen(v: GoVal | null): number {
  if (v === null) throw new BexprPanic('reflect: call of reflect.Value.Len on zero Value');
  switch (v.kind) {
    case 'string':
      return Buffer.byteLength(v.v, 'utf8');
    case 'map':
      return v.entries?.length ?? 0;
    case 'slice':
      return v.items?.length ?? 0;
    default:
      throw new BexprPanic(`reflect: call of reflect.Value.Len on ${reflectKind(v)} Value`);
  }
}

/** Translates the RE2 syntax JavaScript lacks; throws BexprEvalError like regexp.Compile. */
function compileGoRegexp(raw: string): RegExp {
  let src = raw;
  let flags = '';
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    flags = lead[1]!.replace(/U/g, '');
    src = src.slice(lead[0].length);
  }
  src = src
    .replace(/\(\?P</g, '(?<')
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\\A/g, '^');
  try {
    return new RegExp(src, flags);
  } catch (e) {
    const msg = (e as Error).message.replace(/^Invalid regular expression: /, '');
    throw new BexprEvalError(`Failed to compile regular expression ${goQuote(raw)}: error parsing regexp: ${msg}`);
  }
}

function evalMatch(expr: Extract<Expr, { type: 'match' }>, datum: GoVal): boolean {
  let val: GoVal;
  try {
    val = pointerGet(datum, expr.selector.path);
  } catch (e) {
    if (e instanceof NotFound) {
      // Missing map key at the leaf: the operator decides (go-bexpr NotPresentDisposition).
      if (expr.selector.path.length >= 2) {
        try {
          const parent = pointerGet(datum, expr.selector.path.slice(0, -1));
          if (parent.kind === 'map') return NOT_PRESENT[expr.op];
        } catch {
          /* fall through to the original error */
        }
      }
      throw new BexprEvalError(`error finding value in datum: ${e.message}`);
    }
    if (e instanceof BexprEvalError) throw new BexprEvalError(`error finding value in datum: ${e.message}`);
    throw e;
  }
  const rv = indirect(val);
  const raw = expr.value ?? '';
  const kind = reflectKind(rv);
  switch (expr.op) {
    case 'Equal':
    case 'NotEqual': {
      if (!isPrimitiveKind(kind))
        throw new BexprEvalError('unable to find suitable primitive comparison function for matching');
      const eq = primitiveEqual(coerce(raw, kind), rv);
      return expr.op === 'Equal' ? eq : !eq;
    }
    case 'In':
    case 'NotIn': {
      const r = doMatchIn(expr, raw, rv, kind);
      return expr.op === 'In' ? r : !r;
    }
    case 'IsEmpty':
      return goLen(rv) === 0;
    case 'IsNotEmpty':
      return goLen(rv) !== 0;
    case 'Matches':
    case 'NotMatches': {
      if (rv === null) throw new BexprPanic('reflect: call of reflect.Value.Type on zero Value');
      if (rv.kind !== 'string') throw new BexprEvalError(`Value of type ${rv.type} is not convertible to []byte`);
      const re = compileGoRegexp(raw);
      const m = re.test(rv.v);
      return expr.op === 'Matches' ? m : !m;
    }
  }
}

function doMatchIn(expr: Extract<Expr, { type: 'match' }>, raw: string, rv: GoVal | null, kind: string): boolean {
  const matchValue = coerce(raw, kind);
  if (rv === null) {
    throw new BexprEvalError(
      `Cannot perform in/contains operations on type invalid for selector: ${goQuote(selectorString(expr.selector))}`,
    );
  }
  switch (rv.kind) {
    case 'map':
      return (rv.entries ?? []).some(([k]) => k === matchValue);
    case 'slice': {
      const elemKind = rv.elemKind;
      const mv = coerce(raw, elemKind);
      if (!isPrimitiveKind(elemKind))
        throw new BexprEvalError('unable to find suitable primitive comparison function for "in" comparison');
      return (rv.items ?? []).some((item) => primitiveEqual(mv, indirect(item)));
    }
    case 'string':
      return rv.v.includes(String(matchValue));
    default:
      throw new BexprEvalError(
        `Cannot perform in/contains operations on type ${kind} for selector: ${goQuote(selectorString(expr.selector))}`,
      );
  }
}

/** Evaluates a parsed expression against a datum. Throws BexprEvalError / BexprPanic. */
export function evaluateBexpr(expr: Expr, datum: GoVal): boolean {
  switch (expr.type) {
    case 'not':
      return !evaluateBexpr(expr.operand, datum);
    case 'and':
      return evaluateBexpr(expr.left, datum) && evaluateBexpr(expr.right, datum);
    case 'or':
      return evaluateBexpr(expr.left, datum) || evaluateBexpr(expr.right, datum);
    case 'match':
      return evalMatch(expr, datum);
  }
}
