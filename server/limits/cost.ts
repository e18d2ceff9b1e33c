/**
 * Cost estimate of an operation, from the costs declared in the schema with the IBM cost spec's
 * directives (`@cost(weight:)`, `@listSize(assumedSize:, slicingArguments:, sizedFields:)`, the
 * ones GraphQL Armor and Apollo demand control read). graphql-query-complexity walks the
 * operation (fragments, `@skip`/`@include`, variables); the estimator here prices each field:
 *
 *   cost(field) = weight + size × (item + children)     for a list
 *   cost(field) = weight + item + size × children       for a field with `@listSize(sizedFields:)`
 *   cost(field) = weight + item + children              otherwise
 *
 * - weight: the field's `@cost`, else 10 on a mutation root field, else 0;
 * - item: the return type's `@cost`, else 1 for an object, interface or union, 0 for a scalar;
 * - size: the largest slicing argument given (defaults count; at most MAX_PAGE_SIZE, the largest
 *   page served), else `assumedSize`, else 1. The sized fields of a connection (`nodes`,
 *   `edges`) take size 1: their parent multiplied already.
 *
 * docs/limits.md explains the weights. The estimate needs the variables, so it runs per request
 * as an execution guard, after validation.
 */
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  Kind,
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type ValueNode,
  visit,
} from 'graphql';
import { ErrorCode } from '../../adapters/errors';
import { MAX_PAGE_SIZE } from '../../adapters/input';
import { limitGraphQLError, OperationLimitError } from './errors';

/** A mutation root field's weight unless it declares one (Apollo demand control's default). */
const MUTATION_WEIGHT = 10;
/** Fields priced per operation at most; a fragment bomb is refused at this many. */
const MAX_FIELD_EVALUATIONS = 5_000;

interface FieldCost {
  weight: number;
  item: number;
  list: boolean;
  slicing: readonly string[];
  assumedSize?: number;
  /** Has `sizedFields`: the size multiplies the children (a connection). */
  sizes: boolean;
  /** Is a sized field of its parent: size 1 here. */
  sized: boolean;
}

function directive(nodes: ReadonlyArray<{ directives?: readonly ConstDirectiveNode[] } | null | undefined>, name: string): ConstDirectiveNode | undefined {
  for (const n of nodes) {
    const d = n?.directives?.find((x) => x.name.value === name);
    if (d) return d;
  }
  return undefined;
}

function arg(d: ConstDirectiveNode | undefined, name: string): ValueNode | undefined {
  return d?.arguments?.find((a) => a.name.value === name)?.value;
}

function weightOf(d: ConstDirectiveNode | undefined): number | undefined {
  const v = arg(d, 'weight');
  if (!v) return undefined;
  const n = v.kind === Kind.STRING || v.kind === Kind.INT || v.kind === Kind.FLOAT ? Number(v.value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

const strings = (v: ValueNode | undefined): string[] => (v?.kind === Kind.LIST ? v.values.flatMap((x) => (x.kind === Kind.STRING ? [x.value] : [])) : []);

function typeWeight(t: GraphQLNamedType): number {
  const declared = weightOf(directive([t.astNode, ...(t.extensionASTNodes ?? [])], 'cost'));
  return declared ?? (isCompositeType(t) ? 1 : 0);
}

/** Costs read from one schema's SDL, cached per field. */
class SchemaCosts {
  readonly #fields = new WeakMap<GraphQLField<unknown, unknown>, FieldCost>();
  /** `Type.field` of every sized field named by some `@listSize(sizedFields:)`. */
  readonly #sized = new Set<string>();
  /** Every argument name some `@listSize(slicingArguments:)` names: the only arguments priced. */
  readonly slicingNames = new Set<string>();

  constructor(readonly schema: GraphQLSchema) {
    for (const t of Object.values(schema.getTypeMap())) {
      if (!('getFields' in t) || t.name.startsWith('__')) continue;
      for (const f of Object.values(t.getFields()) as Array<GraphQLField<unknown, unknown>>) {
        const listSize = directive([f.astNode], 'listSize');
        for (const s of strings(arg(listSize, 'sizedFields'))) this.#sized.add(`${getNamedType(f.type).name}.${s}`);
        for (const s of strings(arg(listSize, 'slicingArguments'))) this.slicingNames.add(s);
      }
    }
  }

  of(field: GraphQLField<unknown, unknown>, parent: GraphQLNamedType): FieldCost {
    let c = this.#fields.get(field);
    if (c) return c;
    const listSize = directive([field.astNode], 'listSize');
    const assumed = arg(listSize, 'assumedSize');
    c = {
      weight: weightOf(directive([field.astNode], 'cost')) ?? (parent === this.schema.getMutationType() ? MUTATION_WEIGHT : 0),
      item: typeWeight(getNamedType(field.type)),
      list: isListType(getNullableType(field.type)),
      slicing: strings(arg(listSize, 'slicingArguments')),
      ...(assumed?.kind === Kind.INT ? { assumedSize: Number(assumed.value) } : {}),
      sizes: strings(arg(listSize, 'sizedFields')).length > 0,
      sized: this.#sized.has(`${parent.name}.${field.name}`),
    };
    this.#fields.set(field, c);
    return c;
  }
}

class TooManyFields extends Error {}

function size(c: FieldCost, args: Record<string, unknown>): number {
  if (c.sized) return 1;
  let n: number | undefined;
  for (const s of c.slicing) {
    const v = args[s];
    // No page is larger than MAX_PAGE_SIZE: a larger `first` is the resolver's BAD_USER_INPUT.
    if (typeof v === 'number' && Number.isFinite(v)) n = Math.max(n ?? 0, Math.min(v, MAX_PAGE_SIZE));
  }
  return Math.max(0, n ?? c.assumedSize ?? 1);
}

const costsBySchema = new WeakMap<GraphQLSchema, SchemaCosts>();

function costsOf(schema: GraphQLSchema): SchemaCosts {
  let costs = costsBySchema.get(schema);
  if (!costs) costsBySchema.set(schema, (costs = new SchemaCosts(schema)));
  return costs;
}

/** The estimated cost of `operationName` in `document` with `variables`. @throws GraphQLError when the variables do not fit (the executor reports those). */
export function estimateCost(a: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variables?: Record<string, unknown> | null }): number {
  const priced = costsOf(a.schema);
  let evaluated = 0;
  const estimator: ComplexityEstimator = ({ field, args, childComplexity, type }) => {
    if (++evaluated > MAX_FIELD_EVALUATIONS) throw new TooManyFields();
    const c = priced.of(field, type);
    if (c.list) return c.weight + size(c, args) * (c.item + childComplexity);
    if (c.sizes) return c.weight + c.item + size(c, args) * childComplexity;
    return c.weight + c.item + childComplexity;
  };
  try {
    return getComplexity({
      schema: a.schema,
      query: a.document,
      operationName: a.operationName ?? undefined,
      variables: a.variables ?? {},
      estimators: [estimator],
      maxQueryNodes: Number.MAX_SAFE_INTEGER,
    });
  } catch (err) {
    if (err instanceof TooManyFields) return Infinity;
    throw err;
  }
}

/**
 * The execution guard: a typed error when the operation's estimated cost is over `maxCost`.
 * Variables that do not fit the operation are left to the executor, which reports them.
 */
export function checkCost(maxCost: number, a: Parameters<typeof estimateCost>[0]): GraphQLError | undefined {
  const cost = memoizedCost(a);
  if (cost === null || cost <= maxCost) return undefined;
  const found = Number.isFinite(cost) ? Math.ceil(cost) : undefined;
  return limitGraphQLError(
    new OperationLimitError(
      ErrorCode.CostEstimatedTooExpensive,
      `the operation's estimated cost ${found ?? `(more than ${MAX_FIELD_EVALUATIONS} fields)`} is over the limit of ${maxCost} (MAX_COST): ask for fewer items (first) or fewer fields that need backend reads`,
      'maxCost',
      maxCost,
      found,
    ),
  );
}

/** Estimates remembered per document, and the longest key remembered. */
const MAX_MEMO_ESTIMATES = 64;
const MAX_MEMO_KEY = 1024;
const memos = new WeakMap<DocumentNode, { variables: readonly string[]; estimates: Map<string, number | null> }>();

/**
 * The estimate, or null when the variables do not fit (the executor reports those). The same
 * document (the server reuses parsed documents) with the same values in the places that are
 * priced has the same estimate: it is computed once, not on every request.
 */
function memoizedCost(a: Parameters<typeof estimateCost>[0]): number | null {
  let memo = memos.get(a.document);
  if (!memo) memos.set(a.document, (memo = { variables: pricedVariables(a.document, costsOf(a.schema).slicingNames), estimates: new Map() }));
  const key = `${a.operationName ?? ''}\u0000${JSON.stringify(memo.variables.map((v) => a.variables?.[v] ?? null))}`;
  const known = memo.estimates.get(key);
  if (known !== undefined) return known;
  let cost: number | null;
  try {
    cost = estimateCost(a);
  } catch (err) {
    if (!(err instanceof GraphQLError)) throw err;
    cost = null;
  }
  if (key.length <= MAX_MEMO_KEY && memo.estimates.size < MAX_MEMO_ESTIMATES) memo.estimates.set(key, cost);
  return cost;
}

/** Variables whose values can change the estimate: those in slicing arguments and in `@skip`/`@include`. */
function pricedVariables(document: DocumentNode, slicingNames: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  const collect = (v: ValueNode): void => {
    if (v.kind === Kind.VARIABLE) found.add(v.name.value);
    else if (v.kind === Kind.LIST) v.values.forEach(collect);
    else if (v.kind === Kind.OBJECT) v.fields.forEach((f) => collect(f.value));
  };
  visit(document, {
    Field: (f) => f.arguments?.forEach((x) => slicingNames.has(x.name.value) && collect(x.value)),
    Directive: (d) => (d.name.value === 'skip' || d.name.value === 'include') && d.arguments?.forEach((x) => collect(x.value)),
  });
  return [...found].sort();
}
