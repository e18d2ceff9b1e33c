import { encodeGlobalId } from '../../adapters/contract/ids';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_READ,
  MGMT,
  closedPortUrl,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const READ = `query($id: ID!) { volume(id: $id) { nativeId } }`;

describe('typed errors from Nomad answers', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  let volId: string;

  beforeEach(async () => {
    sim = await startNomad();
    seedVolumes(sim, 1);
    seedVolumes(sim, 1, 'analytics', 'an');
    // A short backend deadline for the BACKEND_TIMEOUT case (the simulator answers that one after 2 s),
    // yet long enough for any answer on a loaded 2-core machine running the whole suite.
    gw = await startGatewayFor([{ id: 'east', url: sim.url, timeoutMs: 1_000, readRetries: 0 }]);
    volId = encodeGlobalId({ kind: 'Volume', backend: 'east', scope: 'default', nativeId: 'vol-000' });
  });
  afterEach(disposeAll);

  const code = (body: any): string => body.errors?.[0]?.extensions?.code;

  it('should answer CONFLICT with the backend message for "volume in use" (a plain-text 500)', async () => {
    sim.placeAllocation({
      jobId: 'db',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    const res = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: volId },
      admin,
    );
    expect(res.body.errors[0].extensions).toEqual({
      code: 'CONFLICT',
      backend: 'east',
      httpStatus: 500,
      retryable: false,
      backendMessage: 'volume in use: vol-000',
    });
  });

  it('should answer NOT_FOUND for write paths on unknown volumes (a plain-text 500 on Nomad)', async () => {
    const gone = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: volId },
      admin,
    );
    expect(gone.body.errors).toBeUndefined();
    const again = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: volId },
      admin,
    );
    expect(again.body.errors[0].extensions).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 500,
      backendMessage: 'volume not found: vol-000',
    });
  });

  it('should answer FORBIDDEN when the token may not do it or is unknown (Nomad answers both alike), and UNAUTHENTICATED without a token', async () => {
    const res = await gw.gql(READ, { id: volId }, { 'x-nomad-token': ANALYTICS_READ });
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'FORBIDDEN',
      httpStatus: 403,
      backendMessage: 'Permission denied',
    });
    expect(res.body.data).toEqual({ volume: null });
    const unknown = await gw.gql(READ, { id: volId }, { 'x-nomad-token': 'not-a-token' });
    expect(code(unknown.body)).toBe('FORBIDDEN');
    const none = await gw.gql(READ, { id: volId });
    expect(code(none.body)).toBe('UNAUTHENTICATED');
    expect(none.body.errors[0].message).toContain('X-Nomad-Token');
  });

  it('should send a per-backend token header only to that backend', async () => {
    await gw.gql(READ, { id: volId }, { 'x-nomad-token': 'wrong', 'x-nomad-token-east': MGMT });
    expect(sim.requests().at(-1)!.headers['x-nomad-token']).toBe(MGMT);
  });

  it('should answer BACKEND_UNAVAILABLE when the backend refuses connections', async () => {
    const gw2 = await startGatewayFor([{ id: 'gone', url: await closedPortUrl(), readRetries: 1 }]);
    const res = await gw2.gql(`{ volumeByNativeId(backend: "gone", nativeId: "x") { id } }`, {}, admin);
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      backend: 'gone',
      retryable: true,
    });
    expect(res.body.data).toEqual({ volumeByNativeId: null });
  });

  it('should answer BACKEND_TIMEOUT when the backend does not answer within the deadline', async () => {
    sim.setLatency(2_000);
    const res = await gw.gql(READ, { id: volId }, admin);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BACKEND_TIMEOUT', backend: 'east', retryable: true });
    sim.setLatency(0);
  });

  it('should retry an idempotent read once after a 503 and never retry a write', async () => {
    const gw2 = await startGatewayFor([{ id: 'east', url: sim.url, readRetries: 1 }]);
    sim.clearRequests();
    sim.failNext({ count: 1, status: 503, body: 'No cluster leader', method: 'GET' });
    const ok = await gw2.gql(READ, { id: volId }, admin);
    expect(ok.body).toEqual({ data: { volume: { nativeId: 'vol-000' } } });
    expect(sim.requests().map((r) => `${r.method} ${r.status}`)).toEqual(['GET 503', 'GET 200']);
    sim.clearRequests();
    sim.failNext({ count: 1, status: 503, body: 'No cluster leader', method: 'DELETE' });
    const res = await gw2.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: volId },
      admin,
    );
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BACKEND_UNAVAILABLE', httpStatus: 503 });
    expect(sim.requests().map((r) => r.method)).toEqual(['DELETE']);
  });
});
