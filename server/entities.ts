/**
 * Federation's `_entities(representations:)` with each representation checked first. The
 * subgraph endpoint is the public one, so representations come from any caller, not only from a
 * router: @apollo/subgraph throws a plain `Error` (INTERNAL_SERVER_ERROR, and the whole list
 * lost) for a representation that names no entity type, and the references read their key
 * fields as strings. A bad representation now fails alone with BAD_USER_INPUT at its item's
 * path; the others resolve, in the same tick, so the loaders still batch them.
 */
import { Kind, isUnionType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { BadUserInputError } from '../adapters/contract/errors';

/** Key fields per entity type, from `@key(fields: "…")` (simple keys: names separated by spaces). */
function entityKeys(schema: GraphQLSchema): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  const entity = schema.getType('_Entity');
  if (!isUnionType(entity)) return keys;
  for (const t of entity.getTypes()) {
    const fields = [t.astNode, ...t.extensionASTNodes]
      .flatMap((n) => n?.directives ?? [])
      .filter((d) => d.name.value === 'key')
      .flatMap((d) => d.arguments ?? [])
      .flatMap((a) =>
        a.name.value === 'fields' && a.value.kind === Kind.STRING ? a.value.value.split(/\s+/).filter(Boolean) : [],
      );
    keys.set(t.name, [...new Set(fields)]);
  }
  return keys;
}

/** Why `r` is not a representation of an entity of this schema; undefined when it is one. */
function representationProblem(r: unknown, keys: ReadonlyMap<string, readonly string[]>): string | undefined {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return 'is not an object';
  const typename = (r as { __typename?: unknown }).__typename;
  if (typeof typename !== 'string') return 'has no __typename';
  const fields = keys.get(typename);
  if (!fields) return 'names no entity type of this subgraph';
  const missing = fields.filter((f) => typeof (r as Record<string, unknown>)[f] !== 'string');
  return missing.length ? `lacks its key field ${missing.join(', ')} as a string` : undefined;
}

/** Replaces the resolver of `Query._entities` in `schema` (built by `buildSubgraphSchema`) with a checked one. */
export function checkEntityRepresentations(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve;
  if (!field || !resolve) return schema;
  const keys = entityKeys(schema);
  const checked: GraphQLFieldResolver<unknown, unknown, { representations: unknown[] }> = (source, args, ctx, info) =>
    args.representations.map((r, i) => {
      const problem = representationProblem(r, keys);
      // An Error as a list item fails that item only (graphql-js completes it as a field error).
      if (problem) return new BadUserInputError(`representations[${i}] ${problem}`, 'representations');
      try {
        return (resolve(source, { representations: [r] }, ctx, info) as unknown[])[0];
      } catch (err) {
        // A reference that throws at once (a malformed global id) fails its item, not the list.
        return err;
      }
    });
  field.resolve = checked as GraphQLFieldResolver<unknown, unknown>;
  return schema;
}
