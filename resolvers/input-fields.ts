/**
 * Adapters name the fields of their input errors relative to the input they were given
 * (`nomad.nativeId`, `cascade`: `BadUserInputError.atField`); this is the one place that places
 * them under the GraphQL argument the input came from (`input.nomad.nativeId`), so clients see
 * argument paths in `extensions.argument` and in messages, and adapters know no argument.
 */
import { BadUserInputError, type FieldNamer } from '../adapters/contract/errors';

/** Names a field relative to argument `argument` (`''` is the argument itself); null: relative to the field's arguments. */
export const underArgument =
  (argument: string | null): FieldNamer =>
  (field) =>
    argument === null ? field : field === '' ? argument : `${argument}.${field}`;

/**
 * A resolver whose adapter calls were given input from `argument` (null: from the field's
 * arguments themselves): input errors that name a relative field get its argument path; every
 * other error passes unchanged.
 */
export function placingFields<A extends unknown[], R>(argument: string | null, resolve: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  const name = underArgument(argument);
  return async (...args) => {
    try {
      return await resolve(...args);
    } catch (err) {
      throw err instanceof BadUserInputError ? err.placed(name) : err;
    }
  };
}
