/**
 * The response-size cap and the deadline, enforced while executing: every field resolver of the
 * schema is wrapped (a walk over the type map, no executor hooks), so any executor that runs the
 * schema with a context carrying {@link ExecutionLimits} applies them. Each resolved field adds
 * its estimated JSON size; once the cap is passed or the deadline has come, later fields do no
 * work: the first one fails with the reason, later nullable ones are nulled quietly (a flood of
 * identical errors would be a second explosion) and non-null ones fail, which nulls their
 * nearest nullable parent, as GraphQL's null propagation does.
 */
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import type { LimitedContext } from '../../domain/execution-limits';

/** How a field's value is measured. */
const enum Shape {
  Leaf,
  LeafList,
  Object,
  ObjectList,
}

/** Estimated JSON bytes of a scalar or enum value. */
function leafBytes(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
      return 12;
    case 'boolean':
      return 5;
    case 'object':
      // JSON scalars (connection info, connectors) are objects: measured as they will be sent.
      return v === null ? 4 : (JSON.stringify(v)?.length ?? 4);
    default:
      return 4;
  }
}

function valueBytes(shape: Shape, v: unknown): number {
  if (v === null || v === undefined) return 4;
  switch (shape) {
    case Shape.Leaf:
      return leafBytes(v);
    case Shape.Object:
      return 2;
    case Shape.ObjectList:
      return Array.isArray(v) ? 2 + 3 * v.length : 2;
    case Shape.LeafList: {
      if (!Array.isArray(v)) return 2;
      let n = 2;
      for (const x of v) n += leafBytes(x) + 1;
      return n;
    }
  }
}

function shapeOf(field: GraphQLField<unknown, unknown>): Shape {
  const list = isListType(getNullableType(field.type));
  const leaf = isLeafType(getNamedType(field.type));
  return list ? (leaf ? Shape.LeafList : Shape.ObjectList) : leaf ? Shape.Leaf : Shape.Object;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

/** How often (in fields) the wrapper asks the clock: a power of two minus one, as a mask. */
const CLOCK_MASK = 255;

function wrapField(field: GraphQLField<unknown, unknown>): void {
  const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
  const shape = shapeOf(field);
  const nullable = !isNonNullType(field.type);
  // `"name":` and a comma.
  const keyBytes = field.name.length + 4;
  field.resolve = function limited(source, args, ctx: unknown, info) {
    const lim = (ctx as LimitedContext | undefined)?.limits;
    if (lim === undefined) return resolve(source, args, ctx, info);
    if (lim.stop !== undefined || ((++lim.fields & CLOCK_MASK) === 0 && lim.overdue())) {
      if (nullable && lim.reported) return null;
      lim.reported = true;
      // Set by now: overdue() aborts the operation, and the abort sets `stop`.
      throw lim.stop!;
    }
    const alias = info.fieldNodes[0]?.alias;
    const key = alias ? alias.value.length + 4 : keyBytes;
    const v = resolve(source, args, ctx, info);
    if (isThenable(v)) {
      return v.then((x) => {
        lim.add(key + valueBytes(shape, x));
        return x;
      });
    }
    lim.add(key + valueBytes(shape, v));
    return v;
  };
}

const wrapped = new WeakSet<GraphQLSchema>();

/** Wraps every field resolver of `schema` in place (once) and returns it. */
export function wrapSchema(schema: GraphQLSchema): GraphQLSchema {
  if (wrapped.has(schema)) return schema;
  wrapped.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) wrapField(field);
  }
  return schema;
}
