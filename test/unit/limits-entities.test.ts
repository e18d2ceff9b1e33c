/**
 * The cost of federation's `_entities(representations:)` on the real subgraph schema: it scales
 * with the number of representations (literal or variables), each priced as its type's root
 * lookup by id, and the per-document memo keys on what the estimate reads of them.
 */
import { parse } from 'graphql';
import type { GatewayError } from '../../adapters/contract/errors';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { DEFAULT_LIMITS } from '../../server/limits';
import { checkCost, estimateCost } from '../../server/limits/cost';
import { buildGatewaySchema } from '../../server/schema';

const schema = buildGatewaySchema();
const cost = (query: string, variables?: Record<string, unknown>): number =>
  estimateCost({ schema, document: parse(query), variables });
const volume = (i: number): { __typename: string; id: string } => ({
  __typename: 'Volume',
  id: encodeGlobalId({ kind: 'Volume', backend: 'east', scope: 'default', nativeId: `vol-${i}` }),
});
const volumes = (n: number): Array<{ __typename: string; id: string }> =>
  Array.from({ length: n }, (_, i) => volume(i));
const BY_VARIABLE = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Volume { id name } } }';

describe('cost of _entities(representations:)', () => {
  it('should price each representation of a literal list as its root lookup plus the item', () => {
    // volume(id:) declares @cost(weight: 5); the _Entity item 1; id and name 0.
    expect(
      cost(
        '{ _entities(representations: [{ __typename: "Volume", id: "a" }, { __typename: "Volume", id: "b" }]) { ... on Volume { id name } } }',
      ),
    ).toBe(2 * 5 + 2 * 1);
    expect(cost('{ _entities(representations: []) { ... on Volume { id } } }')).toBe(0);
  });

  it('should count the representations given in variables', () => {
    expect(cost(BY_VARIABLE, { r: volumes(1) })).toBe(5 + 1);
    expect(cost(BY_VARIABLE, { r: volumes(300) })).toBe(300 * (5 + 1));
    expect(cost(BY_VARIABLE, { r: volumes(5000) })).toBe(5000 * (5 + 1));
  });

  it('should count one variable per representation inside a literal list', () => {
    expect(
      cost('query($a: _Any!, $b: _Any!) { _entities(representations: [$a, $b]) { ... on Volume { id } } }', {
        a: volume(1),
        b: volume(2),
      }),
    ).toBe(2 * (5 + 1));
  });

  it('should weigh each representation by its own type and multiply the children', () => {
    const reps = [
      volume(1),
      { __typename: 'VolumeOperation', id: 'op' },
      { __typename: 'Server', id: 'srv' },
      { __typename: 'NoSuchType', id: 'x' },
    ];
    // volume(id:) 5, volumeOperation(id:) 1, Server and an unknown type no lookup; four items.
    expect(cost(BY_VARIABLE, { r: reps })).toBe(5 + 1 + 0 + 0 + 4 * 1);
    // sizeBytes is a detail read (@cost 5) of each Volume: the children count once per representation.
    expect(
      cost('query($r: [_Any!]!) { _entities(representations: $r) { ... on Volume { id sizeBytes } } }', {
        r: volumes(2),
      }),
    ).toBe(2 * 5 + 2 * (1 + 5));
  });

  it('should refuse 5,000 representations under the default limit, and key the memo by their count', () => {
    const document = parse(BY_VARIABLE);
    const check = (n: number): string | undefined =>
      (
        checkCost(DEFAULT_LIMITS.maxCost, { schema, document, variables: { r: volumes(n) } })?.originalError as
          GatewayError | undefined
      )?.code;
    // The same parsed document, one representation first: a memo keyed without the representations would let 5,000 through.
    expect(check(1)).toBeUndefined();
    expect(check(5000)).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    expect(check(800)).toBeUndefined();
    expect(check(834)).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    expect(check(1)).toBeUndefined();
  });

  it('should name the estimate in the refusal', () => {
    const err = checkCost(DEFAULT_LIMITS.maxCost, {
      schema,
      document: parse(BY_VARIABLE),
      variables: { r: volumes(5000) },
    });
    expect(err?.message).toMatch(/estimated cost 30000 is over the limit of 5000/);
  });
});
