/**
 * The client-facing API schema: the subgraph SDL (what `_service { sdl }` and
 * `schema/generated/published.graphql` hold) without Federation's machinery, so strict tools
 * (graphql-js `buildSchema`, GraphQL Inspector, codegen) take it as it is. The subgraph SDL applies
 * `@link`, `@key`, `@shareable`, `@cost` and `@listSize` without defining them, which only a
 * Federation-aware reader accepts. Committed as `schema/generated/api.graphql` (scripts/schema-check.ts)
 * and served at {@link API_SCHEMA_PATH} (server/api-schema-handler.ts); both come from here.
 */
import { printSubgraphSchema } from '@apollo/subgraph';
import {
  buildASTSchema,
  Kind,
  parse,
  printSchema,
  specifiedDirectives,
  visit,
  type GraphQLSchema,
  type SchemaExtensionNode,
} from 'graphql';

/** Where the gateway serves the API schema: under the GraphQL path, as `/graphql/possible-types.json`, so what forwards `/graphql` forwards it too. */
export const API_SCHEMA_PATH = '/graphql/schema.graphql';

/** Where the API schema is committed, relative to the repository (and the installed package). */
export const API_SCHEMA_FILE = 'schema/generated/api.graphql';

/** graphql-js's own directives (`@deprecated`, `@specifiedBy`, `@oneOf` …): every reader knows them. */
const STANDARD_DIRECTIVES = new Set(specifiedDirectives.map((d) => d.name));

/** Federation's own types (`_Any`, `_Entity`, `_Service`, `link__Import`, `federation__FieldSet` …) and root fields, where the input has them. */
const isFederationType = (name: string): boolean => /^(_|link__|federation__)/.test(name) || name === 'FieldSet';
const FEDERATION_FIELDS = new Set(['_service', '_entities']);

const HEADER = [
  "# The volume gateway's API schema, as clients see it: the subgraph SDL (schema/generated/published.graphql)",
  "# without Federation's directives and fields, for codegen and schema tools. The gateway serves this text at",
  `# GET ${API_SCHEMA_PATH}. Do not edit: \`npm run schema:publish\` writes it.`,
  '',
  '',
].join('\n');

/**
 * The API schema's SDL from subgraph SDL (printSubgraphSchema's, or graphql-js's printSchema of the
 * executable schema, which also has Federation's definitions): applied directives other than
 * graphql-js's own, directive definitions, Federation's types and root fields and the
 * `extend schema @link(…)` are dropped; the rest (descriptions, deprecations) is rebuilt and printed
 * by graphql-js, extensions merged into their types. @throws GraphQLError when what is left is not a valid schema
 */
export function apiSchemaSdl(subgraphSdl: string): string {
  const doc = parse(subgraphSdl);
  const definitions = doc.definitions.filter(
    (d) => d.kind !== Kind.DIRECTIVE_DEFINITION && !('name' in d && isFederationType(d.name?.value ?? '')),
  );
  const stripped = visit(
    { ...doc, definitions },
    {
      Directive: (node) => (STANDARD_DIRECTIVES.has(node.name.value) ? undefined : null),
      FieldDefinition: (node) => (FEDERATION_FIELDS.has(node.name.value) ? null : undefined),
      // An `extend schema` that only carried `@link` is empty once its directives are gone.
      SchemaExtension: {
        leave: (node: SchemaExtensionNode) =>
          (node.operationTypes?.length ?? 0) > 0 || (node.directives?.length ?? 0) > 0 ? undefined : null,
      },
    },
  );
  return printSchema(buildASTSchema(stripped));
}

/** The file's (and the served) text for subgraph SDL: a comment header, then {@link apiSchemaSdl}. */
export const apiSchemaText = (subgraphSdl: string): string => `${HEADER}${apiSchemaSdl(subgraphSdl).trimEnd()}\n`;

/** The API schema text of an executable subgraph schema (server/schema.ts). */
export const apiSchemaTextOf = (schema: GraphQLSchema): string => apiSchemaText(printSubgraphSchema(schema));
