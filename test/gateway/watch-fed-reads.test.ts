/**
 * Watch-fed reads (docs/subscriptions.md): once the Nomad watcher keeps the backend's volumes
 * current, `volumes { attachments }` needs no per-volume read. The caller's own calls still decide:
 * one list, plus one read per namespace in the page that proves `csi-read-volume` there; the
 * details then come from the watcher's view. Real gateway, real Nomad simulator with ACLs.
 */
import {
  calls,
  disposeAll,
  MGMT,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';
import { until } from '../support/until';
import type { NomadSimulator } from '../../simulators/nomad';

let sim: NomadSimulator;
let watched: GatewayUnderTest;
let plain: GatewayUnderTest;
const LIST =
  '{ volumes(first: 200) { nodes { id namespace attachments { id state consumer { ... on VolumeAllocationConsumer { allocationId clientStatus } } } } } }';
const auth = (t: string): Record<string, string> => ({ 'x-nomad-token': t });

/** The watcher's status for `east` from /readyz. */
async function watcher(gw: GatewayUnderTest): Promise<any> {
  const res = await fetch(gw.gateway.url.replace('/graphql', '/readyz'));
  const body = (await res.json()) as { watchers: Array<{ backend: string; watcher: any }> };
  return body.watchers.find((w) => w.backend === 'east')?.watcher;
}

beforeAll(async () => {
  sim = await startNomad();
  const ids = seedVolumes(sim, 100, 'default');
  seedVolumes(sim, 10, 'analytics', 'ana');
  for (let i = 0; i < 100; i += 5)
    sim.placeAllocation({
      jobId: `job-${i}`,
      nodeId: 'node-1111',
      volumes: [{ volumeId: ids[i]!, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    });
  sim.addToken({ secret: 'default-list-only', namespaces: { default: ['csi-list-volume'] } });
  sim.addToken({ secret: 'default-reader', namespaces: { default: 'read' } });
  // The same backend twice: with the service token (a watcher) and without (none).
  watched = await startGatewayFor([{ id: 'east', url: sim.url, token: MGMT }]);
  plain = await startGatewayFor([{ id: 'east', url: sim.url }]);
  await until(
    async () => (await watcher(watched))?.state === 'STREAMING' && (await watcher(watched)).volumes === 110,
    'the watcher to hold all 110 volumes',
    20_000,
  );
}, 60_000);
afterAll(() => disposeAll());

describe('watch-fed reads', () => {
  it('should answer a page of 100 volumes in one namespace with 2 backend calls, the same data as 101 calls without a watcher', async () => {
    const q =
      '{ volumes(first: 100, filter: { namespace: "default" }) { nodes { id attachments { id state consumer { ... on VolumeAllocationConsumer { allocationId clientStatus } } } } } }';
    sim.clearRequests();
    const fed = await watched.gql(q, {}, auth(MGMT));
    const fedCalls = calls(sim).filter((c) => !c.includes('/v1/event/stream'));
    sim.clearRequests();
    const read = await plain.gql(q, {}, auth(MGMT));
    const readCalls = calls(sim);
    expect(fed.body.errors).toBeUndefined();
    expect(fed.body).toEqual(read.body);
    expect(fed.body.data.volumes.nodes.filter((v: any) => v.attachments.length === 1)).toHaveLength(20);
    expect(fedCalls).toEqual(['GET /v1/volumes', 'GET /v1/volume/csi/vol-000']);
    expect(readCalls).toHaveLength(101);
  });

  it('should cost 1 + k calls for a page spanning k namespaces', async () => {
    sim.clearRequests();
    const res = await watched.gql(LIST, {}, auth(MGMT));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toHaveLength(110);
    const c = calls(sim).filter((x) => !x.includes('/v1/event/stream'));
    expect(c).toHaveLength(3);
    expect(c[0]).toBe('GET /v1/volumes');
    expect(c.slice(1).sort()).toEqual(['GET /v1/volume/csi/ana-000', 'GET /v1/volume/csi/vol-000']);
  });

  it('should serve nothing from the watcher to a token that may list a namespace but not read it', async () => {
    sim.clearRequests();
    const res = await watched.gql(
      '{ volumes(first: 100, filter: { namespace: "default" }) { nodes { id attachments { id } } } }',
      {},
      auth('default-list-only'),
    );
    expect(res.body.data.volumes.nodes).toHaveLength(100);
    expect(res.body.data.volumes.nodes.every((v: any) => v.attachments === null)).toBe(true);
    expect(new Set(res.body.errors.map((e: any) => e.extensions.code))).toEqual(new Set(['FORBIDDEN']));
    expect(res.body.errors).toHaveLength(100);
    // One list and the one read that was refused: the refusal covers the namespace.
    expect(calls(sim).filter((x) => !x.includes('/v1/event/stream'))).toEqual([
      'GET /v1/volumes',
      'GET /v1/volume/csi/vol-000',
    ]);
  });

  it('should give a namespace reader its namespace from the watcher, and nothing once its token is revoked', async () => {
    const q = '{ volumes(first: 100, filter: { namespace: "default" }) { nodes { id attachments { id } } } }';
    const ok = await watched.gql(q, {}, auth('default-reader'));
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.volumes.nodes.filter((v: any) => v.attachments.length === 1)).toHaveLength(20);
    sim.removeToken('default-reader');
    sim.clearRequests();
    const revoked = await watched.gql(q, {}, auth('default-reader'));
    // The list itself is refused: the backend's place in the page is a null item with the error.
    expect(revoked.body.data.volumes.nodes).toEqual([null]);
    expect(revoked.body.errors.map((e: any) => [e.path, e.extensions.code])).toEqual([
      [['volumes', 'nodes', 0], expect.stringMatching(/^(FORBIDDEN|UNAUTHENTICATED)$/)],
    ]);
    expect(calls(sim).filter((x) => !x.includes('/v1/event/stream'))).toEqual(['GET /v1/volumes']);
  });
});
