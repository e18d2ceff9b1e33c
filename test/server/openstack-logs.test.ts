/**
 * Logs of a gateway serving OpenStack at debug level (one line per backend call) never hold a
 * caller's Keystone token, the service credential's password or token, or Cinder's
 * connection_info, which the one mutation that returns it hands back to its caller only.
 */
import { Writable } from 'node:stream';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { createLogger } from '../../server/logger';
import { OS, disposeAll, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { encodeGlobalId } from '../../adapters/contract/ids';
import { isTerminal, settle } from '../support/until';

describe('OpenStack logs', () => {
  let os: OpenStackUnderTest;
  let gateway: RunningGateway;
  const lines: string[] = [];
  const gql = async (query: string, variables: unknown, token: string): Promise<any> =>
    (
      await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': token },
        body: JSON.stringify({ query, variables }),
      })
    ).json();

  /** Polls `volumeOperation(id)` until it is terminal (at most 15 s); its last state. */
  const finalState = async (id: string): Promise<string> => {
    const read = async (): Promise<{ state: string }> => {
      const res = await gql('query($id: ID!) { volumeOperation(id: $id) { state } }', { id }, os.demoToken);
      if (!res.data?.volumeOperation) throw new Error(`operation ${id} not readable: ${JSON.stringify(res)}`);
      return res.data.volumeOperation;
    };
    return (await settle(read, isTerminal, 15_000, 25)).state;
  };

  beforeAll(async () => {
    os = await startOpenStack({ delays: { attachMs: 5, attachCompleteMs: 5, createMs: 5 } });
    const sink = new Writable({
      write: (chunk, _enc, done) => (lines.push(...chunk.toString().split('\n').filter(Boolean)), done()),
    });
    const logger = createLogger('debug', sink);
    const registry = createRegistry(
      [
        os.backend('os', {
          auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        }),
      ],
      (r) => logger.debug(r, 'backend call'),
    );
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 4, maxBodyBytes: 1_048_576 },
      registry,
      logger,
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await disposeAll();
  });

  it('should log requests and backend calls without tokens, passwords or connection info', async () => {
    const volume = os.sim.seedVolume({ project: os.demo, name: 'logged', size: 1 });
    const server = os.sim.seedServer({ project: os.demo, name: 'logged-server' });
    const id = encodeGlobalId({ kind: 'Volume', backend: 'os', scope: os.demo, nativeId: volume });
    const init = await gql(
      'mutation Init($i: InitializeCinderVolumeConnectionInput!) { initializeCinderVolumeConnection(input: $i) { connectionInfo } }',
      {
        i: {
          volumeId: id,
          connector: { host: 'bm-1', initiator: 'iqn.2004-10.com.example:logged-host', ip: '192.0.2.10' },
        },
      },
      os.demoToken,
    );
    expect(init.errors).toBeUndefined();
    // The caller who asked gets it …
    expect(JSON.stringify(init.data.initializeCinderVolumeConnection.connectionInfo)).toContain('driver_volume_type');
    const attach = await gql(
      'mutation Attach($v: ID!, $s: ID!) { attachVolume(input: { volumeId: $v, target: { server: { serverId: $s } } }) { operation { id } } }',
      { v: id, s: server },
      os.demoToken,
    );
    expect(attach.errors).toBeUndefined();
    expect(await finalState(attach.data.attachVolume.operation.id)).toBe('SUCCEEDED');
    const ready = await fetch(new URL('/readyz', gateway.url));
    expect(ready.status).toBe(200); // the service credential was used
    const bad = await gql('{ volumes { nodes { id } } }', undefined, 'not-a-valid-keystone-token-value');
    expect(bad.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    const all = lines.join('\n');
    expect(lines.filter((l) => l.includes('"backend call"')).length).toBeGreaterThan(5);
    expect(lines.some((l) => l.includes('"graphql request"') && l.includes('"Attach"'))).toBe(true);
    // … and nothing of it, nor any credential, reaches the log.
    for (const needle of [
      os.demoToken,
      OS.adminPassword,
      'not-a-valid-keystone-token-value',
      'driver_volume_type',
      'iqn.2004-10.com.example:logged-host',
    ]) {
      expect({ needle, found: all.includes(needle) }).toEqual({ needle, found: false });
    }
    expect(all).not.toMatch(/x-auth-token|x-subject-token/i);
  });
});
