/**
 * Introspection's own limit. It is exempt from the depth limit (the standard introspection query
 * nests `ofType` 15 levels), so instead each operation may hold at most `maxFields` introspection
 * root fields (`__schema`, `__type`), each at most `maxDepth` levels deep and with fewer than
 * three nested type lists (`fields`, `interfaces`, `possibleTypes`, `inputFields`), the bound
 * graphql-js's MaxIntrospectionDepthRule uses. 1,000 aliases of `__schema` are refused here,
 * before anything runs. With introspection off, any introspection field is refused.
 */
import {
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { ErrorCode } from '../../adapters/contract/errors';
import { limitGraphQLError, OperationLimitError } from './errors';

export interface IntrospectionLimits {
  enabled: boolean;
  maxFields: number;
  maxDepth: number;
}

const ROOTS = new Set(['__schema', '__type']);
const TYPE_LISTS = new Set(['fields', 'interfaces', 'possibleTypes', 'inputFields']);
/** As graphql-js: three nested type lists is where the answer starts to explode. */
const MAX_TYPE_LISTS = 3;

interface Shape {
  depth: number;
  lists: number;
}

/** Deepest field path and most nested type lists of a selection set; fragments are measured once. */
function measure(ctx: ValidationContext, set: SelectionSetNode, memo: Map<string, Shape>, active: Set<string>): Shape {
  let depth = 0;
  let lists = 0;
  for (const s of set.selections) {
    let inner: Shape;
    if (s.kind === Kind.FIELD) {
      const below = s.selectionSet ? measure(ctx, s.selectionSet, memo, active) : { depth: 0, lists: 0 };
      inner = { depth: below.depth + 1, lists: below.lists + (TYPE_LISTS.has(s.name.value) ? 1 : 0) };
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(ctx, s.selectionSet, memo, active);
    } else {
      inner = fragmentShape(ctx, ctx.getFragment(s.name.value), memo, active);
    }
    depth = Math.max(depth, inner.depth);
    lists = Math.max(lists, inner.lists);
  }
  return { depth, lists };
}

function fragmentShape(
  ctx: ValidationContext,
  f: FragmentDefinitionNode | null | undefined,
  memo: Map<string, Shape>,
  active: Set<string>,
): Shape {
  // Unknown fragments and cycles are other rules' errors.
  if (!f || active.has(f.name.value)) return { depth: 0, lists: 0 };
  const known = memo.get(f.name.value);
  if (known) return known;
  active.add(f.name.value);
  const shape = measure(ctx, f.selectionSet, memo, active);
  active.delete(f.name.value);
  memo.set(f.name.value, shape);
  return shape;
}

/** Introspection root fields of an operation's top level (the only place they are valid). */
function rootFields(ctx: ValidationContext, set: SelectionSetNode, out: FieldNode[], seen: Set<string>): void {
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) {
      if (ROOTS.has(s.name.value)) out.push(s);
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      rootFields(ctx, s.selectionSet, out, seen);
    } else if (!seen.has(s.name.value)) {
      // A fragment spread twice at the root merges into the same fields.
      seen.add(s.name.value);
      const f = ctx.getFragment(s.name.value);
      if (f) rootFields(ctx, f.selectionSet, out, seen);
    }
  }
}

export function introspectionRule(o: IntrospectionLimits): ValidationRule {
  return (ctx) => ({
    OperationDefinition(op) {
      const fields: FieldNode[] = [];
      rootFields(ctx, op.selectionSet, fields, new Set());
      if (fields.length === 0) return;
      const refuse = (err: OperationLimitError, node: FieldNode): void => ctx.reportError(limitGraphQLError(err, node));
      if (!o.enabled) {
        return refuse(
          new OperationLimitError(
            ErrorCode.IntrospectionDisabled,
            'introspection is disabled on this gateway (INTROSPECTION)',
            'introspection',
            0,
          ),
          fields[0]!,
        );
      }
      if (fields.length > o.maxFields) {
        return refuse(
          new OperationLimitError(
            ErrorCode.MaxIntrospectionLimit,
            `the operation has ${fields.length} introspection fields; at most ${o.maxFields} are allowed (MAX_INTROSPECTION_FIELDS)`,
            'maxIntrospectionFields',
            o.maxFields,
            fields.length,
          ),
          fields[o.maxFields]!,
        );
      }
      const memo = new Map<string, Shape>();
      for (const f of fields) {
        const below = f.selectionSet ? measure(ctx, f.selectionSet, memo, new Set()) : { depth: 0, lists: 0 };
        if (below.depth + 1 > o.maxDepth) {
          return refuse(
            new OperationLimitError(
              ErrorCode.MaxIntrospectionLimit,
              `introspection nested ${below.depth + 1} levels deep; at most ${o.maxDepth} are allowed (MAX_INTROSPECTION_DEPTH)`,
              'maxIntrospectionDepth',
              o.maxDepth,
              below.depth + 1,
            ),
            f,
          );
        }
        if (below.lists >= MAX_TYPE_LISTS) {
          return refuse(
            new OperationLimitError(
              ErrorCode.MaxIntrospectionLimit,
              `introspection nests ${below.lists} type lists (fields, interfaces, possibleTypes, inputFields); at most ${MAX_TYPE_LISTS - 1} are allowed`,
              'introspectionTypeLists',
              MAX_TYPE_LISTS - 1,
              below.lists,
            ),
            f,
          );
        }
      }
    },
  });
}
