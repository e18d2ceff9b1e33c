/**
 * Valid-ish GraphQL operations built from the introspected schema: random field selections to a
 * bounded depth, arguments from {@link InputValues} (inline literals or variables), inline
 * fragments on abstract types. Nothing here knows a field name, so generators follow renames.
 */
import fc from 'fast-check';
import {
  getNamedType,
  GraphQLInputObjectType,
  GraphQLNonNull,
  isAbstractType,
  isCompositeType,
  isLeafType,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { type InputValues, plausibleValue, printLiteral, type Value } from './input-values';
import type { Vocabulary } from './world';

/** A piece of document text; `\u0001` marks a variable reference, named in order at assembly. */
export interface Piece {
  text: string;
  /** Variables referenced in `text`, in order: their declared type and value. */
  vars: Array<{ type: string; value: Value }>;
}

/** What the fuzzer posts as a GraphQL request. */
export interface GraphQLCall {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** A call with the name of its shape, for reports (the label is not sent). */
export interface LabelledCall {
  label: string;
  call: GraphQLCall;
}

export const VAR = '\u0001';

export interface DocumentLimits {
  /** Deepest field nesting of random selections. */
  maxDepth: number;
  /** Most fields per selection set. */
  maxFields: number;
}

export const join = (pieces: Piece[], sep = ' '): Piece => ({
  text: pieces
    .map((p) => p.text)
    .filter(Boolean)
    .join(sep),
  vars: pieces.flatMap((p) => p.vars),
});

/** Builds operations for one schema. */
export class SchemaArbitraries {
  readonly #sets = new Map<string, fc.Arbitrary<Piece>>();

  constructor(
    readonly schema: GraphQLSchema,
    readonly values: InputValues,
    readonly limits: DocumentLimits,
  ) {}

  /** One argument: inline literal, or a variable of the argument's type. */
  argument(arg: GraphQLArgument): fc.Arbitrary<Piece> {
    const value = this.values.of(arg.type, arg.name);
    // Half as variables: JSON carries what a literal cannot (lone surrogates, numbers beyond Int).
    return fc
      .tuple(value, fc.boolean())
      .map(([v, asVariable]) =>
        asVariable
          ? { text: `${arg.name}: ${VAR}`, vars: [{ type: String(arg.type), value: v }] }
          : { text: `${arg.name}: ${printLiteral(v)}`, vars: [] },
      );
  }

  /** Arguments of a field: every required one, some optional ones. */
  arguments(field: GraphQLField<unknown, unknown>): fc.Arbitrary<Piece> {
    if (field.args.length === 0) return fc.constant({ text: '', vars: [] });
    const parts = field.args.map((a) => {
      const required = a.type instanceof GraphQLNonNull && a.defaultValue === undefined;
      const arb = this.argument(a);
      return required ? arb.map((p): Piece | null => p) : fc.option(arb, { nil: null, freq: 2 });
    });
    return fc.tuple(...parts).map((ps) => {
      const given = ps.filter((p): p is Piece => p !== null);
      return given.length === 0
        ? { text: '', vars: [] }
        : (({ text, vars }) => ({ text: `(${text})`, vars }))(join(given, ', '));
    });
  }

  /** A field with its arguments and, for composite types, a sub-selection one level deeper. */
  field(field: GraphQLField<unknown, unknown>, depth: number): fc.Arbitrary<Piece & { name: string }> {
    const named = getNamedType(field.type);
    const sub = isCompositeType(named)
      ? this.selectionSet(named, depth + 1)
      : fc.constant<Piece>({ text: '', vars: [] });
    return fc
      .tuple(this.arguments(field), sub)
      .map(([args, s]) => ({ name: field.name, ...join([{ text: field.name + args.text, vars: args.vars }, s], ' ') }));
  }

  /** `{ … }` for a composite type: random fields (leaves only at the depth limit), inline fragments on abstract types. */
  selectionSet(type: GraphQLCompositeType, depth: number): fc.Arbitrary<Piece> {
    const key = `${type.name}|${depth}`;
    const known = this.#sets.get(key);
    if (known) return known;
    // Terminates: fields go one level deeper, abstract types only to object types at the same level.
    const arb = this.#buildSet(type, depth);
    this.#sets.set(key, arb);
    return arb;
  }

  #buildSet(type: GraphQLCompositeType, depth: number): fc.Arbitrary<Piece> {
    const typename = fc.constant({ name: '__typename', text: '__typename', vars: [] as Piece['vars'] });
    const choices: Array<fc.Arbitrary<Piece & { name: string }>> = [typename];
    if (isAbstractType(type)) {
      if (depth < this.limits.maxDepth) {
        for (const t of this.schema.getPossibleTypes(type)) {
          choices.push(
            this.selectionSet(t, depth).map((s) => ({
              name: `... on ${t.name}`,
              text: `... on ${t.name} ${s.text}`,
              vars: s.vars,
            })),
          );
        }
      }
    } else {
      for (const f of Object.values((type as GraphQLObjectType).getFields())) {
        const composite = isCompositeType(getNamedType(f.type));
        if (composite && depth >= this.limits.maxDepth) continue;
        if (!composite && !isLeafType(getNamedType(f.type))) continue;
        choices.push(this.field(f, depth));
      }
    }
    return fc.array(fc.oneof(...choices), { minLength: 1, maxLength: this.limits.maxFields }).map((fields) => {
      const seen = new Map<string, number>();
      const named = fields.map((f) => {
        const n = seen.get(f.name) ?? 0;
        seen.set(f.name, n + 1);
        // Repeats get aliases: the same name with other arguments would not validate.
        return n === 0 || f.name.startsWith('...') ? f : { ...f, text: `${f.name.replace(/\W/g, '')}_${n}: ${f.text}` };
      });
      const body = join(named);
      return { text: `{ ${body.text} }`, vars: body.vars };
    });
  }

  /** A root selection: one to `maxFields` fields of the query or mutation type (those `which` keeps). */
  rootSelection(
    kind: 'query' | 'mutation',
    maxFields = 3,
    which: (f: GraphQLField<unknown, unknown>) => boolean = () => true,
  ): fc.Arbitrary<Piece> {
    const root = kind === 'mutation' ? this.schema.getMutationType() : this.schema.getQueryType();
    const kept = root ? Object.values(root.getFields()).filter(which) : [];
    if (kept.length === 0) return fc.constant({ text: '{ __typename }', vars: [] });
    const fields = kept.map((f) => this.field(f, 1));
    return fc.array(fc.oneof(...fields), { minLength: 1, maxLength: maxFields }).map((fs) => {
      const body = join(fs.map((f, i) => (i === 0 ? f : { ...f, text: `r${i}: ${f.text}` })));
      return { text: `{ ${body.text} }`, vars: body.vars };
    });
  }

  /**
   * A complete operation: query (mostly), mutation, or now and then a subscription keyword over
   * HTTP (the schema has no subscription type yet: it must be refused cleanly).
   */
  operation(which?: (f: GraphQLField<unknown, unknown>) => boolean, maxFields = 3): fc.Arbitrary<GraphQLCall> {
    const name = fc.option(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('Op', 'op_1') },
        { weight: 1, arbitrary: fc.constantFrom('Ö', '__x', 'query') },
      ),
      { nil: undefined },
    );
    const query = this.rootSelection('query', maxFields, which);
    const mutation = this.rootSelection('mutation', maxFields, which);
    return fc.oneof(
      { weight: 8, arbitrary: fc.tuple(name, query).map(([n, sel]) => assemble('query', n, sel)) },
      { weight: 3, arbitrary: fc.tuple(name, mutation).map(([n, sel]) => assemble('mutation', n, sel)) },
      { weight: 1, arbitrary: fc.tuple(name, query).map(([n, sel]) => assemble('subscription', n, sel)) },
    );
  }
}

/**
 * Operations on one root field where every argument is plausible except one slot (an argument,
 * or a field of an input-object argument), which gets a generated, usually hostile, value: so
 * each identifier check is reached on its own instead of behind an earlier failure.
 */
export function oneHostileSlot(s: SchemaArbitraries, v: Vocabulary): fc.Arbitrary<LabelledCall> {
  // Shallow selections without arguments of their own: the point is the one hostile slot.
  const selectionOf = (f: GraphQLField<unknown, unknown>): fc.Arbitrary<string> => {
    const named = getNamedType(f.type);
    return isCompositeType(named)
      ? s.selectionSet(named, s.limits.maxDepth - 1).map((x) => (x.vars.length ? '{ __typename }' : x.text))
      : fc.constant('');
  };
  const slotCase = (
    kind: string,
    f: GraphQLField<unknown, unknown>,
    a: GraphQLArgument,
    slot: string | null,
  ): fc.Arbitrary<LabelledCall> => {
    const named = getNamedType(a.type);
    const slotType = slot === null ? a.type : (named as GraphQLInputObjectType).getFields()[slot]!.type;
    // `pick` chooses which real backend, namespace, id… the plausible arguments name.
    return fc.tuple(s.values.of(slotType, slot ?? a.name), selectionOf(f), fc.nat(3)).map(([bad, sel, pick]) => {
      const args = f.args
        .filter((x) => x === a || (x.type instanceof GraphQLNonNull && x.defaultValue === undefined))
        .map((x) => {
          if (x !== a) return `${x.name}: ${printLiteral(plausibleValue(x.type, x.name, v, pick))}`;
          if (slot === null) return `${x.name}: $bad`;
          const base = plausibleValue(x.type, x.name, v, pick) as Record<string, Value>;
          const fields = Object.entries({ ...base, [slot]: null }).map(
            ([k, y]) => `${k}: ${k === slot ? '$bad' : printLiteral(y)}`,
          );
          return `${x.name}: {${fields.join(', ')}}`;
        });
      const query = `${kind}($bad: ${String(slotType)}) { ${f.name}(${args.join(', ')}) ${sel} }`;
      return {
        label: 'one hostile argument',
        call: { query, variables: JSON.parse(JSON.stringify({ bad })) as Record<string, unknown> },
      };
    });
  };
  const perField = (kind: 'query' | 'mutation'): Array<fc.Arbitrary<LabelledCall>> => {
    const root = kind === 'query' ? s.schema.getQueryType() : s.schema.getMutationType();
    return (root ? Object.values(root.getFields()) : [])
      .filter((f) => f.args.length > 0)
      .map((f) =>
        fc.oneof(
          ...f.args.flatMap((a) => {
            const named = getNamedType(a.type);
            const slots = named instanceof GraphQLInputObjectType ? Object.keys(named.getFields()) : [null];
            return slots.map((slot) => slotCase(kind, f, a, slot));
          }),
        ),
      );
  };
  // Reads first: they are where ids enter most often; each field is as likely as any other.
  return fc.oneof(
    { weight: 2, arbitrary: fc.oneof(...perField('query')) },
    { weight: 1, arbitrary: fc.oneof(...perField('mutation')) },
  );
}

/** Root fields with arguments: where ids, names and numbers from the caller enter. */
export const hasArguments = (f: GraphQLField<unknown, unknown>): boolean => f.args.length > 0;

/** Root fields callable without arguments (lists, backends): they reach every backend. */
export const needsNoArguments = (f: GraphQLField<unknown, unknown>): boolean =>
  f.args.every((a) => !(a.type instanceof GraphQLNonNull) || a.defaultValue !== undefined);

/** Names the variables of `sel` `$v0, $v1…`, declares them and puts their values in `variables`. */
export function assemble(keyword: string, name: string | undefined, sel: Piece, fragments = ''): GraphQLCall {
  let i = 0;
  const text = sel.text.replace(new RegExp(VAR, 'g'), () => `$v${i++}`);
  const defs = sel.vars.map((v, j) => `$v${j}: ${v.type}`).join(', ');
  const variables: Record<string, unknown> = {};
  sel.vars.forEach((v, j) => (variables[`v${j}`] = v.value));
  const head = `${keyword}${name ? ` ${name}` : ''}${defs ? `(${defs})` : ''}`;
  return {
    query: `${head} ${text}${fragments ? `\n${fragments}` : ''}`,
    ...(sel.vars.length ? { variables: JSON.parse(JSON.stringify(variables)) as Record<string, unknown> } : {}),
    ...(name ? { operationName: name } : {}),
  };
}
