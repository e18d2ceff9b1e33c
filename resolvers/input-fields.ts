/**
 * Adapters name the fields of their input errors relative to the input they were given
 * (`nomad.nativeId`, `cascade`: `BadUserInputError.atField`); this is the one place that places
 * them under the GraphQL argument the input came from (`input.nomad.nativeId`), so clients see
 * argument paths in `extensions.argument` and in messages, and adapters know no argument.
 */
import { GatewayError, type FieldNamer } from '../adapters/contract/errors';
import type { Resolvers } from '../schema/generated/resolvers-types';

/** Names a field relative to argument `argument` (`''` is the argument itself); null: relative to the field's arguments. */
export const underArgument =
  (argument: string | null): FieldNamer =>
  (field) =>
    argument === null ? field : field === '' ? argument : `${argument}.${field}`;

/**
 * A resolver whose adapter calls were given input from `argument` (null: from the field's
 * arguments themselves): errors whose messages name relative fields get argument paths; every
 * other error passes unchanged.
 */
export function placingFields<A extends unknown[], R>(
  argument: string | null,
  resolve: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  const name = underArgument(argument);
  return async (...args) => {
    try {
      return await resolve(...args);
    } catch (err) {
      throw err instanceof GatewayError ? err.placed(name) : err;
    }
  };
}

/**
 * The root fields with their adapters' fields placed: every mutation takes its input as its one
 * argument `input` (the schema's convention), a query takes its arguments as they are.
 */
export function placeInputFields(resolvers: Resolvers): Resolvers {
  const wrap = (fields: object | undefined, argument: string | null): Record<string, unknown> | undefined =>
    fields &&
    Object.fromEntries(
      Object.entries(fields).map(([k, f]) => [
        k,
        typeof f === 'function' ? placingFields(argument, f as (...a: unknown[]) => unknown) : f,
      ]),
    );
  return { ...resolvers, Query: wrap(resolvers.Query, null), Mutation: wrap(resolvers.Mutation, 'input') } as Resolvers;
}
