/**
 * Documents shaped to hurt: deep nesting along the schema's cycles, alias floods, fragment
 * chains, cycles and fan-out, directive floods with odd arguments, introspection floods, token
 * floods, floods of federation entity references, variables of the wrong shape and broken
 * syntax. Built from the introspected schema.
 */
import fc from 'fast-check';
import {
  getNamedType,
  GraphQLNonNull,
  isAbstractType,
  isCompositeType,
  isObjectType,
  isUnionType,
  type GraphQLCompositeType,
  type GraphQLField,
} from 'graphql';
import { plausibleValue, printLiteral, type Value } from './input-values';
import {
  assemble,
  join,
  VAR,
  type GraphQLCall,
  type LabelledCall,
  type Piece,
  type SchemaArbitraries,
} from './schema-arbitraries';
import type { Vocabulary } from './world';

/** Largest alias flood document, in characters (the gateway's default body limit is 1 MiB). */
const MAX_FLOOD_CHARS = 2 * 1_048_576;

export interface HostileLimits {
  /** Longest field chain of a deep document. */
  maxChain: number;
  /** Most aliases (and most copies of the chain) in one document. */
  maxAliases: number;
  /** Most directives on one selection. */
  maxDirectives: number;
  /** Most repeated tokens in a token flood. */
  maxTokens: number;
  /** Most fragments in a chain or fan-out. */
  maxFragments: number;
  /** Most representations in one `_entities` call. */
  maxRepresentations: number;
}

export class HostileDocuments {
  constructor(
    private readonly s: SchemaArbitraries,
    private readonly v: Vocabulary,
    private readonly limits: HostileLimits,
  ) {}

  /** Required arguments only, with plausible values, so the chain executes as far as it can. */
  #requiredArgs(f: GraphQLField<unknown, unknown>): string {
    const req = f.args.filter((a) => a.type instanceof GraphQLNonNull && a.defaultValue === undefined);
    return req.length === 0
      ? ''
      : `(${req.map((a) => `${a.name}: ${printLiteral(plausibleValue(a.type, a.name, this.v))}`).join(', ')})`;
  }

  /**
   * A walk down composite fields chosen by `steps` (each an index into the current type's
   * composite fields), e.g. volumes → nodes → attachments → volume → attachments → …
   */
  chainText(steps: number[]): string {
    const root = this.s.schema.getQueryType()!;
    let type: GraphQLCompositeType = root;
    let open = '';
    let close = '';
    for (const step of steps) {
      if (isAbstractType(type)) {
        const possible = this.s.schema.getPossibleTypes(type);
        const t = possible[step % possible.length]!;
        open += `... on ${t.name} { `;
        close = ` }${close}`;
        type = t;
        continue;
      }
      const fields = Object.values(type.getFields()).filter((f) => isCompositeType(getNamedType(f.type)));
      if (fields.length === 0) break;
      const f = fields[step % fields.length]!;
      open += `${f.name}${this.#requiredArgs(f)} { `;
      close = ` }${close}`;
      type = getNamedType(f.type) as GraphQLCompositeType;
    }
    const leaf = isObjectType(type)
      ? (Object.values(type.getFields()).find((f) => !isCompositeType(getNamedType(f.type)) && f.args.length === 0)
          ?.name ?? '')
      : '';
    return `${open}__typename ${leaf}${close}`;
  }

  deepChain(): fc.Arbitrary<GraphQLCall> {
    return fc
      .tuple(
        fc.array(fc.nat(40), { minLength: 2, maxLength: this.limits.maxChain }),
        fc.integer({ min: 1, max: Math.max(1, Math.floor(this.limits.maxAliases / 8)) }),
      )
      .map(([steps, copies]) => {
        const chain = this.chainText(steps);
        const body = Array.from({ length: copies }, (_, i) => (i === 0 ? chain : `c${i}: ${chain}`)).join(' ');
        return { query: `{ ${body} }` };
      });
  }

  aliasFlood(): fc.Arbitrary<GraphQLCall> {
    return fc
      .tuple(this.s.rootSelection('query', 1), fc.integer({ min: 2, max: this.limits.maxAliases }))
      .map(([sel, wanted]) => {
        const inner = sel.text.slice(1, -1).trim();
        // Bounded at twice the gateway's body limit: a larger document tests only the size refusal
        // (the raw property does), and building a 25 MB one blamed the fuzzer's own memory on the gateway.
        const perCopy = inner.length + 8 + JSON.stringify(sel.vars.map((v) => v.value)).length + 40 * sel.vars.length;
        const n = Math.max(2, Math.min(wanted, Math.floor(MAX_FLOOD_CHARS / perCopy)));
        const copies = Array.from({ length: n }, (_, i): Piece => ({ text: `a${i}: ${inner}`, vars: sel.vars }));
        return assemble('query', undefined, { ...join(copies), text: `{ ${join(copies).text} }` });
      });
  }

  /** Named fragments on the query type: plain, chained, cyclic, self-referencing, fanning out, unknown. */
  fragments(): fc.Arbitrary<GraphQLCall> {
    const q = this.s.schema.getQueryType()!.name;
    const n = fc.integer({ min: 1, max: this.limits.maxFragments });
    return fc
      .tuple(
        this.s.rootSelection('query', 2),
        fc.constantFrom('plain', 'chain', 'cycle', 'self', 'fanout', 'unknown', 'wrong-type'),
        n,
      )
      .map(([sel, shape, count]) => {
        const body = sel.text.slice(1, -1).trim();
        let frags: string;
        switch (shape) {
          case 'plain':
            frags = `fragment F0 on ${q} { ${body} }`;
            break;
          case 'chain':
            frags = Array.from({ length: count }, (_, i) =>
              i === count - 1 ? `fragment F${i} on ${q} { ${body} }` : `fragment F${i} on ${q} { ...F${i + 1} }`,
            ).join('\n');
            break;
          case 'cycle':
            frags = Array.from(
              { length: count + 1 },
              (_, i) => `fragment F${i} on ${q} { ...F${(i + 1) % (count + 1)} __typename }`,
            ).join('\n');
            break;
          case 'self':
            frags = `fragment F0 on ${q} { ...F0 ${body} }`;
            break;
          case 'fanout':
            // Each level spreads the next twice: cheap to execute, costly for naive validation.
            frags = Array.from({ length: count }, (_, i) =>
              i === count - 1
                ? `fragment F${i} on ${q} { ${body} }`
                : `fragment F${i} on ${q} { ...F${i + 1} ...F${i + 1} a${i}: __typename }`,
            ).join('\n');
            break;
          case 'unknown':
            frags = '';
            break;
          default:
            frags = `fragment F0 on NoSuchType { ${body} }`;
        }
        return assemble('query', undefined, { text: `{ ...F0 }`, vars: sel.vars }, frags);
      });
  }

  directives(): fc.Arbitrary<GraphQLCall> {
    const arg = fc.constantFrom('true', 'false', 'null', '"yes"', '1', '[true]', '{}', '$d', 'NOPE');
    const one = fc
      .tuple(
        fc.constantFrom(
          '@include(if: A)',
          '@skip(if: A)',
          '@include',
          '@skip()',
          '@foo',
          '@deprecated',
          '@include(if: true, if: false)',
          '@skip(unless: A)',
        ),
        arg,
      )
      .map(([d, a]) => d.replace('A', a));
    const dValue = fc.constantFrom<unknown>(true, false, null, 'yes', 1, [true]);
    return fc
      .tuple(
        this.s.rootSelection('query', 2),
        fc.array(one, { minLength: 1, maxLength: this.limits.maxDirectives }),
        fc.constantFrom('Boolean', 'Boolean!', 'String', 'Int!'),
        dValue,
      )
      .map(([sel, ds, dType, d]) => {
        const call = assemble('query', undefined, { text: `{ ... ${ds.join(' ')} ${sel.text} }`, vars: sel.vars });
        if (!ds.some((x) => x.includes('$d'))) return call;
        const declared = call.query.startsWith('query(')
          ? call.query.replace('query(', `query($d: ${dType}, `)
          : call.query.replace(/^query/, `query($d: ${dType})`);
        return { ...call, query: declared, variables: { ...call.variables, d } };
      });
  }

  introspectionFlood(): fc.Arbitrary<GraphQLCall> {
    const unit = fc.constantFrom(
      '__schema { types { name fields { name type { name ofType { name } } } } }',
      '__schema { queryType { name } }',
      '__type(name: "Volume") { name fields { name } }',
      '__type(name: "\\u0000") { name }',
    );
    // A quarter of the alias bound: each copy of the whole schema is costly to answer.
    return fc
      .tuple(unit, fc.integer({ min: 1, max: Math.max(2, Math.floor(this.limits.maxAliases / 4)) }))
      .map(([u, n]) => ({ query: `{ ${Array.from({ length: n }, (_, i) => `i${i}: ${u}`).join(' ')} }` }));
  }

  tokenFlood(): fc.Arbitrary<GraphQLCall> {
    return fc
      .tuple(
        fc.constantFrom('__typename', 't: __typename', '{', '(', '@a', '...on Query{__typename}'),
        fc.integer({ min: 10, max: this.limits.maxTokens }),
      )
      .map(([t, n]) => ({ query: `{ ${Array(n).fill(t).join(' ')} }` }));
  }

  /**
   * `_entities` with up to `maxRepresentations` volume references, as a variable: the seeded
   * volumes repeated (one read each, however often named) or volumes that do not exist, each a
   * read of its own; the selection is random over the entity types. The cost limit prices each
   * reference, the call budget bounds what gets through. Null when the schema is no subgraph.
   */
  entityFlood(): fc.Arbitrary<GraphQLCall> | null {
    const entity = this.s.schema.getType('_Entity');
    if (!isUnionType(entity) || !this.s.schema.getQueryType()?.getFields()._entities) return null;
    const [backend, scope] = [this.v.backends[0]!, this.v.namespaces[0]!];
    const missing = (i: number): string =>
      Buffer.from(JSON.stringify(['Volume', backend, scope, `flood-${i}`]), 'utf8').toString('base64url');
    return fc
      .tuple(fc.integer({ min: 1, max: this.limits.maxRepresentations }), fc.boolean(), this.s.selectionSet(entity, 1))
      .map(([n, distinct, sel]) => {
        const reps: Value[] = Array.from({ length: n }, (_, i) => ({
          __typename: 'Volume',
          id: distinct ? missing(i) : this.v.volumeIds[i % this.v.volumeIds.length]!,
        }));
        return assemble('query', undefined, {
          text: `{ _entities(representations: ${VAR}) ${sel.text} }`,
          vars: [{ type: '[_Any!]!', value: reps }, ...sel.vars],
        });
      });
  }

  /** A generated operation with its text damaged or its variables replaced. */
  broken(): fc.Arbitrary<GraphQLCall> {
    const junk = fc.constantFrom(
      '{',
      '}',
      '"',
      '"""',
      '\u0000',
      '#',
      '$',
      '...',
      '(',
      ')',
      ':',
      '@',
      '\uD800',
      '\\u',
      '1e',
      '&',
    );
    const damaged = fc.tuple(this.s.operation(), fc.nat(), junk, fc.boolean()).map(([op, at, j, cut]) => {
      const i = at % (op.query.length + 1);
      return { ...op, query: cut ? op.query.slice(0, i) + j : op.query.slice(0, i) + j + op.query.slice(i) };
    });
    const wrongVars = fc
      .tuple(
        this.s.operation(),
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.constant({ v0: null }),
          fc.constant({ v0: 'x'.repeat(100_000) }),
          fc.constant({ v0: 1e308, v1: -1e308 }),
        ),
      )
      .map(([op, vars]) => ({ ...op, variables: vars as Record<string, unknown> }));
    const wrongName = this.s.operation().map((op) => ({ ...op, operationName: 'NoSuchOperation' }));
    return fc.oneof(
      damaged,
      wrongVars,
      wrongName,
      fc.constant({ query: '' }),
      fc.constant({ query: '{}' }),
      fc.constant({ query: 'query A { __typename } query A { __typename }' }),
    );
  }

  /** Any of the above, labelled with its shape for reports. */
  any(): fc.Arbitrary<LabelledCall> {
    const as = (label: string, a: fc.Arbitrary<GraphQLCall>, weight = 2): fc.WeightedArbitrary<LabelledCall> => ({
      weight,
      arbitrary: a.map((call) => ({ label, call })),
    });
    const entities = this.entityFlood();
    return fc.oneof(
      as('deep chain', this.deepChain()),
      as('alias flood', this.aliasFlood()),
      as('fragments', this.fragments()),
      as('directives', this.directives()),
      as('introspection flood', this.introspectionFlood()),
      as('token flood', this.tokenFlood()),
      as('broken document', this.broken()),
      // Half as often: the floods that pass the cost limit take up to the call budget in reads.
      ...(entities ? [as('entity flood', entities, 1)] : []),
    );
  }
}
