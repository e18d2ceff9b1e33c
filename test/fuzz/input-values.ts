/**
 * Argument and variable values for any input type of the introspected schema: mostly of the
 * right type, built from real names and hostile strings, sometimes of the wrong type (null where
 * non-null, strings for numbers, numbers beyond Int, objects for scalars). A value can be
 * printed as a GraphQL literal or sent as a JSON variable.
 */
import fc from 'fast-check';
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLInputType,
} from 'graphql';
import { globalId } from './global-ids';
import { hostileIdentifier, hostileText } from './hostile-strings';
import type { Vocabulary } from './world';

/** A number literal printed verbatim (beyond what a JS number keeps, e.g. `1e400`, `99999999999999999999`). */
export class RawNumber {
  constructor(readonly raw: string) {}
  toJSON(): number {
    return Number(this.raw);
  }
}

/** An enum value: printed bare in a literal, a string in JSON. */
export class EnumValue {
  constructor(readonly name: string) {}
  toJSON(): string {
    return this.name;
  }
}

export type Value = null | boolean | number | string | RawNumber | EnumValue | Value[] | { [k: string]: Value };

/** Prints a value as a GraphQL literal. */
export function printLiteral(v: Value): string {
  if (v === null) return 'null';
  if (v instanceof RawNumber) return v.raw;
  if (v instanceof EnumValue) return /^[_A-Za-z][_0-9A-Za-z]*$/.test(v.name) ? v.name : JSON.stringify(v.name);
  if (Array.isArray(v)) return `[${v.map(printLiteral).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${printLiteral(x)}`)
      .join(', ')}}`;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '0';
  return JSON.stringify(v);
}

const INTS: Value[] = [
  0,
  1,
  2,
  5,
  10,
  50,
  100,
  500,
  501,
  1000,
  -1,
  2147483647,
  -2147483648,
  new RawNumber('2147483648'),
  new RawNumber('1e308'),
  new RawNumber('99999999999999999999'),
  1.5,
  new RawNumber('-0'),
];

/** Values of the wrong type for anything. */
const wrongValue: fc.Arbitrary<Value> = fc.oneof<fc.Arbitrary<Value>[]>(
  fc.constant(null),
  fc.constant('1'),
  fc.constant(true),
  fc.constant(1e308),
  fc.constant({ x: 1 }),
  fc.constant([[]]),
  fc.constant(new RawNumber('1e400')),
);

/** Builds value arbitraries for the input types of one schema; memoized per type, hint and depth. */
export class InputValues {
  readonly #memo = new Map<string, fc.Arbitrary<Value>>();
  readonly #id: fc.Arbitrary<string>;
  readonly #representation: fc.Arbitrary<Value>;

  constructor(private readonly v: Vocabulary) {
    const names = [...v.backends, ...v.nativeIds];
    this.#id = fc.oneof({ weight: 3, arbitrary: globalId(v) }, { weight: 2, arbitrary: hostileIdentifier(names) });
    this.#representation = representation(v, this.#id);
  }

  /** A value for `type`; `hint` is the argument or field name, used only to prefer real names. */
  of(type: GraphQLInputType, hint = '', depth = 0, required = false): fc.Arbitrary<Value> {
    const key = `${String(type)}|${hintKind(hint)}|${depth}|${required}`;
    let arb = this.#memo.get(key);
    if (!arb) {
      arb = this.#build(type, hint, depth, required);
      this.#memo.set(key, arb);
    }
    return arb;
  }

  /** `required`: the type sits under a non-null; null (and other wrong values) come from the non-null's own branch. */
  #build(type: GraphQLInputType, hint: string, depth: number, required: boolean): fc.Arbitrary<Value> {
    if (type instanceof GraphQLNonNull) {
      return fc.oneof(
        { weight: 30, arbitrary: this.of(type.ofType, hint, depth, true) },
        { weight: 1, arbitrary: wrongValue },
      );
    }
    // Mistakes compound over the fields of an input object: keep each one rare.
    const nullable = (a: fc.Arbitrary<Value>): fc.Arbitrary<Value> =>
      required
        ? a
        : fc.oneof(
            { weight: 30, arbitrary: a },
            { weight: 2, arbitrary: fc.constant(null) },
            { weight: 1, arbitrary: wrongValue },
          );
    if (type instanceof GraphQLList) {
      const item = this.of(type.ofType, hint, depth + 1);
      return nullable(
        fc.oneof(
          { weight: 4, arbitrary: fc.array(item, { maxLength: depth > 1 ? 1 : 4 }) },
          { weight: 1, arbitrary: item },
        ),
      );
    }
    if (type instanceof GraphQLEnumType) {
      const names = type.getValues().map((x) => x.name);
      return nullable(
        fc
          .oneof(
            { weight: 6, arbitrary: fc.constantFrom(...names) },
            { weight: 1, arbitrary: fc.constantFrom('NOPE', '__typename', 'a b') },
          )
          .map((n) => new EnumValue(n)),
      );
    }
    if (type instanceof GraphQLInputObjectType) {
      if (depth > 3) return fc.constant(required ? {} : null);
      const fields = Object.values(type.getFields());
      const model: Record<string, fc.Arbitrary<Value>> = {};
      for (const f of fields) model[f.name] = this.of(f.type, f.name, depth + 1);
      const requiredKeys = fields
        .filter((f) => f.type instanceof GraphQLNonNull && f.defaultValue === undefined)
        .map((f) => f.name);
      const obj = fc.record(model, { requiredKeys }) as fc.Arbitrary<{ [k: string]: Value }>;
      const withExtra = obj.map((o) => ({ ...o, notAField: 'x' }));
      return nullable(fc.oneof({ weight: 8, arbitrary: obj }, { weight: 1, arbitrary: withExtra }));
    }
    return nullable(this.#scalar(type, hint));
  }

  #scalar(type: GraphQLScalarType, hint: string): fc.Arbitrary<Value> {
    const v = this.v;
    const kind = hintKind(hint);
    const real =
      kind === 'backend'
        ? v.backends
        : kind === 'namespace'
          ? [...v.namespaces, ...v.projects]
          : kind === 'plugin'
            ? v.plugins
            : kind === 'node'
              ? v.nodes
              : v.nativeIds;
    switch (type.name) {
      case 'Int':
        return fc.constantFrom(...INTS);
      case 'Float':
        return fc.oneof(fc.constantFrom(...INTS), fc.double());
      case 'Boolean':
        return fc.boolean();
      case ENTITY_REPRESENTATION:
        return this.#representation;
      case 'ID':
      case 'String':
        if (kind === 'other')
          return type.name === 'ID' ? this.#id : hostileText([...v.nativeIds, ...v.plugins, ...v.namespaces]);
        // A backend id is only looked up: mostly real, so that the other arguments get checked.
        if (kind === 'backend')
          return fc.oneof(
            { weight: 8, arbitrary: fc.constantFrom(...real) },
            { weight: 1, arbitrary: hostileIdentifier(real) },
          );
        return type.name === 'ID'
          ? fc.oneof({ weight: 3, arbitrary: hostileIdentifier(real) }, { weight: 1, arbitrary: this.#id })
          : hostileIdentifier(real);
      default:
        // Custom scalars (sizes, dates, JSON…): any JSON-ish value; the scalar must refuse the wrong ones.
        return fc.oneof<fc.Arbitrary<Value>[]>(
          fc.constantFrom(...INTS),
          hostileText(real, 2_000),
          fc.boolean(),
          fc.constant({ a: [1] }),
        );
    }
  }
}

/** Federation's scalar for an entity reference (`_entities(representations: [_Any!]!)`). */
const ENTITY_REPRESENTATION = '_Any';

/**
 * An entity reference as a router sends it (`{ __typename, id }` of an entity type of the
 * schema, with a global id, a seeded native id or a hostile one), or as nobody should: no
 * `__typename`, a type that is no entity, an id that is not a string, not an object at all.
 */
function representation(v: Vocabulary, id: fc.Arbitrary<string>): fc.Arbitrary<Value> {
  const types = v.entityTypes.length > 0 ? v.entityTypes : ['Volume'];
  const typename = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...types) },
    { weight: 1, arbitrary: hostileIdentifier(types) },
  );
  const key = fc.oneof(
    { weight: 4, arbitrary: id },
    { weight: 1, arbitrary: fc.constantFrom(...v.nativeIds, ...v.nodes) },
  );
  const real = fc.record({ __typename: typename, id: key });
  const odd = fc.oneof<fc.Arbitrary<Value>[]>(
    fc.constantFrom<Value>(
      '',
      'vol-000',
      1,
      [],
      {},
      { a: [1] },
      { __typename: types[0]! },
      { __typename: types[0]!, id: 7 },
      { __typename: '__proto__', id: 'x' },
      { __typename: 'Query', id: 'x' },
    ),
    real.map((r): Value => ({ ...r, extra: { nested: [r] } })),
    fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Value>,
  );
  return fc.oneof({ weight: 8, arbitrary: real }, { weight: 1, arbitrary: odd });
}

type HintKind = 'backend' | 'namespace' | 'plugin' | 'node' | 'native' | 'other';

/** Name hints only bias the choice towards real names; an unknown name still gets hostile values. */
function hintKind(hint: string): HintKind {
  const h = hint.toLowerCase();
  if (h.includes('backend')) return 'backend';
  if (h.includes('namespace') || h.includes('project')) return 'namespace';
  if (h.includes('plugin')) return 'plugin';
  if (h === 'node' || h === 'nodeid') return 'node';
  if (h.includes('nativeid') || h.includes('server') || h.includes('snapshot') || h === 'name') return 'native';
  return 'other';
}

/**
 * A deterministic, plausible value for `type` (real names, small numbers, first enum value):
 * for documents whose point is their shape (deep nesting, floods), not their arguments.
 */
export function plausibleValue(type: GraphQLInputType, hint: string, v: Vocabulary, pick = 0, depth = 0): Value {
  if (type instanceof GraphQLNonNull) return plausibleValue(type.ofType, hint, v, pick, depth);
  if (type instanceof GraphQLList) return [plausibleValue(type.ofType, hint, v, pick, depth + 1)];
  if (type instanceof GraphQLEnumType) return new EnumValue(type.getValues()[0]!.name);
  if (type instanceof GraphQLInputObjectType) {
    if (depth > 3) return null;
    const out: Record<string, Value> = {};
    for (const f of Object.values(type.getFields())) {
      if (f.type instanceof GraphQLNonNull && f.defaultValue === undefined)
        out[f.name] = plausibleValue(f.type, f.name, v, pick, depth + 1);
    }
    return out;
  }
  const kind = hintKind(hint);
  const of = (list: string[]): string => list[pick % list.length]!;
  switch (type.name) {
    case ENTITY_REPRESENTATION:
      // Seeded volumes: the one entity type every vocabulary has ids of.
      return { __typename: 'Volume', id: of(v.volumeIds) };
    case 'Int':
    case 'Float':
      return 50;
    case 'Boolean':
      return false;
    default:
      if (kind === 'other' && type.name === 'ID') return of(v.volumeIds);
      return kind === 'backend'
        ? of(v.backends)
        : kind === 'namespace'
          ? of(v.namespaces)
          : kind === 'plugin'
            ? of(v.plugins)
            : kind === 'node'
              ? of(v.nodes)
              : of(v.nativeIds);
  }
}
