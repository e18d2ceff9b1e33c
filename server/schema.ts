/** The executable schema: the SDL under schema/ with the resolvers, built as a Federation 2 subgraph (the same for direct clients and routers). */
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { parse, type GraphQLSchema } from 'graphql';
import { resolvers } from '../resolvers';
import { loadTypeDefs } from '../schema';
import { checkEntityRepresentations } from './entities';

/** The SDL as one document. */
export const typeDefs = (): string => loadTypeDefs().join('\n');

export function buildGatewaySchema(): GraphQLSchema {
  // The generated resolver types are stricter than @apollo/subgraph's resolver map.
  return checkEntityRepresentations(buildSubgraphSchema({ typeDefs: parse(typeDefs()), resolvers: resolvers as unknown as GraphQLResolverMap<unknown> }));
}
