/**
 * SIGTERM ends the process within the grace period even with a backend call stuck (issue 9): the
 * gateway runs as its own process (`server/main.ts`) against a simulator that never answers.
 * The bound is generous: this tests that it exits, not how fast.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startNomad } from '../support/harness';

const root = join(__dirname, '..', '..');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('shutdown with backend calls stuck', () => {
  let sim: NomadSimulator;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 2);
  });
  afterAll(disposeAll);

  it('should exit 0 after SIGTERM although a query and a readiness probe wait on a backend that never answers', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        GATEWAY_BACKENDS: `east=nomad@${sim.url}`,
        // The call's own deadline is far beyond the test: only shutdown can end it.
        GATEWAY_BACKEND_EAST_TIMEOUT_MS: '600000',
        SHUTDOWN_GRACE_MS: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(child, 'exit');
    try {
      for (let i = 0; i < 300 && !/ready at/.test(out); i++) await sleep(100);
      const url = /ready at (\S+)/.exec(out)![1]!;
      sim.setLatency(1e9);
      sim.clearRequests();
      const stuck = fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-nomad-token': MGMT },
        body: JSON.stringify({ query: '{ volumes(first: 2) { nodes { nativeId } } }' }),
      }).then(
        (r) => r.status,
        () => 'cut',
      );
      // A readiness probe too: its backend call has no caller to cancel it.
      const probe = fetch(url.replace('/graphql', '/readyz')).then(
        (r) => r.status,
        () => 'cut',
      );
      for (let i = 0; i < 100 && sim.requests().length < 2; i++) await sleep(50);
      expect(
        sim
          .requests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/v1/status/leader', '/v1/volumes']);
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), 30_000)));
      const result = await Promise.race([exited.then(([code]) => code as number | null), timedOut]);
      clearTimeout(timer);
      expect(result).toBe(0);
      expect(out).toContain('"msg":"shutting down"');
      // The stuck request was answered or cut, not left waiting.
      expect(await stuck).toBeDefined();
      expect(await probe).toBeDefined();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      sim.setLatency(0);
    }
  }, 60_000);
});
