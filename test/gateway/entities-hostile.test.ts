/**
 * Federation's `_entities` from a caller who is not a router: the subgraph endpoint is the
 * public one, so representations are caller input like any argument.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  calls,
  disposeAll,
  MGMT,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const volumeRef = (nativeId: string): { __typename: string; id: string } => ({
  __typename: 'Volume',
  id: encodeGlobalId({ kind: 'Volume', backend: 'east', scope: 'default', nativeId }),
});
const ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Volume { id name } } }';

describe('_entities against one Nomad cluster', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeEach(async () => {
    sim = await startNomad();
    seedVolumes(sim, 3);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterEach(disposeAll);

  it('should refuse 5,000 representations as too expensive before any backend call', async () => {
    sim.clearRequests();
    const reps = Array.from({ length: 5000 }, (_, i) => volumeRef(`vol-${String(i).padStart(4, '0')}`));
    const res = await gw.gql(ENTITIES, { r: reps }, admin);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors.map((e: any) => e.extensions.code)).toEqual(['COST_ESTIMATED_TOO_EXPENSIVE']);
    expect(calls(sim)).toEqual([]);
    // The same document with a few representations still executes: it is the count that is refused.
    const few = await gw.gql(ENTITIES, { r: [volumeRef('vol-000'), volumeRef('vol-001')] }, admin);
    expect(few.body).toEqual({
      data: {
        _entities: [
          { id: volumeRef('vol-000').id, name: 'vol 0' },
          { id: volumeRef('vol-001').id, name: 'vol 1' },
        ],
      },
    });
  });

  it('should answer BAD_USER_INPUT for each malformed representation and resolve the others', async () => {
    const good = volumeRef('vol-002');
    const reps = [
      good,
      '',
      { a: [1] },
      { __typename: 'NoSuchType', id: 'x' },
      { __typename: 'Volume' },
      { __typename: 'Volume', id: 7 },
      { __typename: 'Volume', id: 'not-a-global-id' },
    ];
    const res = await gw.gql(ENTITIES, { r: reps }, admin);
    expect(res.body.data._entities).toEqual([{ id: good.id, name: 'vol 2' }, null, null, null, null, null, null]);
    const errors = res.body.errors
      .map((e: any) => [e.path, e.extensions.code])
      .sort((a: any, b: any) => a[0][1] - b[0][1]);
    expect(errors).toEqual([1, 2, 3, 4, 5, 6].map((i) => [['_entities', i], 'BAD_USER_INPUT']));
    // Only the good one was read.
    expect(calls(sim)).toEqual(['GET /v1/volume/csi/vol-002']);
  });
});
