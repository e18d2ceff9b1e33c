import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

describe('process lifecycle', () => {
  it('should finish an in-flight request on SIGTERM, then exit 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: root, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(child, 'exit');
    try {
      for (let i = 0; i < 300 && !/ready at/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      const url = /ready at (\S+)/.exec(out)![1]!;
      const simUrl = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out.split('\n').find((l) => l.includes('gateway started'))!.replace(/.*"backends":\[/, ''))![1]!;
      // Slow the backend down so the request is still in flight when the signal arrives.
      await fetch(`${simUrl}/_sim/latency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms: 800 }) });
      const inFlight = fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ volumes(first: 2) { nodes { nativeId } } }' }) }).then((r) => r.json());
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGTERM');
      const body = (await inFlight) as any;
      expect(body.errors).toBeUndefined();
      expect(body.data.volumes.nodes).toHaveLength(2);
      const [code] = await exited;
      expect(code).toBe(0);
      expect(out).toContain('"msg":"shutting down"');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
