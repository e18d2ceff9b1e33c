/** A mutation's idempotency key, as the domain's use cases take it. */
import type { IdempotencyInput } from '../domain';

/** The key of `input` for `mutation`; the rest of the input identifies the request. */
export function idempotencyArg<I extends { idempotencyKey?: string | null }>(
  mutation: string,
  input: I,
): IdempotencyInput {
  const { idempotencyKey, ...request } = input;
  return { mutation, key: idempotencyKey, request, argument: 'input.idempotencyKey' };
}
