/**
 * Issue 17, item 4 (the part of the live hub): SUBSCRIBED names a backend whose watcher is
 * DEGRADED (reason DEGRADED). What makes a watcher DEGRADED today is a source that fails: here the
 * east cluster's simulator runs as a child process and is killed (SIGKILL), so the watcher's stream
 * ends and its reconnects are refused. (A stream that goes silent, or an open breaker, is the
 * watcher's own work, not tested here.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { disposeAll, MGMT, startGatewayFor, startNomad } from '../support/harness';
import { until } from '../support/until';
import { ackedClient, claim, eventOf, subscribed, type RawClient } from './helpers';

const root = join(__dirname, '..', '..');
const SUB =
  'subscription { volumeChanged { type volume { backend { id } } omittedBackends { backend { id } reason code message } } }';

let child: ChildProcess | undefined;
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await disposeAll();
});

/** The standalone Nomad simulator (demo cluster `east`) in a child process; its URL and management token. */
async function startNomadProcess(): Promise<{ url: string; token: string }> {
  const c = spawn(process.execPath, ['--import', 'tsx', 'simulators/nomad/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', NOMAD_SIM_VARIANT: 'east' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = c;
  let out = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => /management token: (\S+)/.test(out), 'the Nomad simulator process', 60_000, 100);
  return { url: /listening on (\S+)/.exec(out)![1]!, token: /management token: (\S+)/.exec(out)![1]! };
}

type Watchers = Array<{ backend: string; watcher: { state: string; currentAt: number | null } | null }>;

describe('SUBSCRIBED and failing watchers', () => {
  jest.setTimeout(120_000);

  it('should name a backend whose watcher is DEGRADED (its simulator killed), and serve the others', async () => {
    const east = await startNomadProcess();
    const west = await startNomad();
    west.seedVolume({
      ID: 'w-000',
      Namespace: 'default',
      PluginID: 'aws-ebs0',
      ExternalID: 'ext-w',
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    });
    const gw = await startGatewayFor([
      { id: 'east', url: east.url, token: east.token, readRetries: 0, timeoutMs: 2_000 },
      { id: 'west', url: west.url, token: MGMT },
    ]);
    const watchers = async (): Promise<Watchers> =>
      ((await (await fetch(gw.gateway.url.replace('/graphql', '/readyz'))).json()) as { watchers: Watchers }).watchers;
    const stateOf = async (id: string): Promise<string | undefined> =>
      (await watchers()).find((w) => w.backend === id)?.watcher?.state;
    await until(
      async () => (await watchers()).every((w) => w.watcher?.currentAt != null),
      "both watchers' first views",
      30_000,
      100,
    );
    const c = await ackedClient(gw.gateway.url.replace(/^http/, 'ws'), {
      'X-Nomad-Token-east': east.token,
      'X-Nomad-Token-west': MGMT,
    });
    clients.push(c);
    expect((await subscribed(c, 'before', SUB)).omittedBackends).toEqual([]);

    child!.kill('SIGKILL');
    await once(child!, 'exit');
    await until(async () => (await stateOf('east')) === 'DEGRADED', "east's watcher to report DEGRADED", 60_000, 100);
    const s = await subscribed(c, 'after', SUB);
    expect(s.omittedBackends).toEqual([
      {
        backend: { id: 'east' },
        reason: 'DEGRADED',
        code: 'BACKEND_UNAVAILABLE',
        message: expect.stringContaining('backend "east"\'s watcher is failing'),
      },
    ]);
    claim(west, ['w-000']);
    expect((await eventOf(c, 'after', 'CLAIMED')).volume.backend.id).toBe('west');
  });
});
