/** The executable schema: the SDL under schema/ with the resolvers, built as a Federation 2 subgraph (the same for direct clients and routers). */
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import {
  Kind,
  parse,
  type DefinitionNode,
  type DocumentNode,
  type EnumValueDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import { gatewayResolvers } from '../resolvers';
import { loadPublishedSdl, loadTypeDefs } from '../schema';
import { layOutAsPublished } from './schema-layout';
import { checkEntityRepresentations } from './entities';
import { BACKEND_RESOLVERS, SDL_FOLDERS } from './kinds';

/** The SDL as one document: the core's and each registered kind's (schema/<kind>/). */
export const typeDefs = (): string => loadTypeDefs(SDL_FOLDERS).join('\n');

/**
 * The values a backend's SDL adds to a core enum with `extend enum` (schema/<backend>/), moved into
 * the enum's definition: @apollo/subgraph drops the descriptions of values given in an extension.
 */
export function foldEnumExtensions(doc: DocumentNode): DocumentNode {
  const defined = new Set(doc.definitions.flatMap((d) => (d.kind === Kind.ENUM_TYPE_DEFINITION ? [d.name.value] : [])));
  const added = new Map<string, EnumValueDefinitionNode[]>();
  const rest = doc.definitions.filter((d) => {
    if (d.kind !== Kind.ENUM_TYPE_EXTENSION || !defined.has(d.name.value) || (d.directives?.length ?? 0) > 0)
      return true;
    added.set(d.name.value, [...(added.get(d.name.value) ?? []), ...(d.values ?? [])]);
    return false;
  });
  const definitions = rest.map((d): DefinitionNode => {
    const more = d.kind === Kind.ENUM_TYPE_DEFINITION ? added.get(d.name.value) : undefined;
    return more && d.kind === Kind.ENUM_TYPE_DEFINITION ? { ...d, values: [...(d.values ?? []), ...more] } : d;
  });
  return { ...doc, definitions };
}

/**
 * The document the schema is built from: the SDL files with enum extensions folded in, laid out as
 * the published SDL (server/schema-layout.ts) so that where a part is written (core or a backend's
 * folder) does not change the printed schema.
 */
export function gatewayDocument(published = loadPublishedSdl()): DocumentNode {
  const doc = foldEnumExtensions(parse(typeDefs()));
  return published === undefined ? doc : layOutAsPublished(doc, parse(published));
}

export function buildGatewaySchema(): GraphQLSchema {
  // The generated resolver types are stricter than @apollo/subgraph's resolver map.
  return checkEntityRepresentations(
    buildSubgraphSchema({
      typeDefs: gatewayDocument(),
      resolvers: gatewayResolvers(BACKEND_RESOLVERS) as unknown as GraphQLResolverMap<unknown>,
    }),
  );
}
