/**
 * Demo safety: the demo serves its management tokens on the GraphiQL page, so it listens on
 * loopback unless HOST is set, and warns when HOST opens it up. Configured gateways keep 0.0.0.0.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config';
import { demoExposureWarning } from '../../server/demo';
import { until } from '../support/until';

const root = join(__dirname, '..', '..');

/** The demo process with `host` as HOST (undefined: unset); its stdout and stderr collected. */
function startDemo(host: string | undefined) {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
  delete env.HOST;
  if (host !== undefined) env.HOST = host;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = async (): Promise<URL> => {
    for (let i = 0; i < 300 && !/Keystone at/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
    return new URL(/ready at (\S+)/.exec(out)![1]!);
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  return { ready, stop, stdout: () => out, stderr: () => err };
}

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect(port, host, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

/** An address of this machine other than loopback, if it has one. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

describe('demo listen address', () => {
  it('should listen on loopback in demo mode when HOST is not set, without the warning', async () => {
    const demo = startDemo(undefined);
    try {
      const url = await demo.ready();
      expect(url.hostname).toBe('127.0.0.1');
      expect(await accepts('127.0.0.1', Number(url.port))).toBe(true);
      if (outsideAddress) expect(await accepts(outsideAddress, Number(url.port))).toBe(false);
      expect(demo.stderr()).not.toContain('WARNING');
    } finally {
      await demo.stop();
    }
  }, 60_000);

  it('should listen where HOST says in demo mode, and warn that the management tokens are reachable', async () => {
    const demo = startDemo('0.0.0.0');
    try {
      const url = await demo.ready();
      if (outsideAddress) expect(await accepts(outsideAddress, Number(url.port))).toBe(true);
      // stderr is its own pipe: the banner may arrive a moment after "ready" on stdout.
      await until(() => demo.stderr().includes('demo-east-management'), 'the demo banner on stderr', 10_000).catch(
        () => undefined,
      );
      expect(demo.stderr()).toContain('WARNING: demo mode is listening on 0.0.0.0 (HOST), not only on loopback');
      expect(demo.stderr()).toContain('demo-east-management');
      // Also in the structured log, for whoever reads logs rather than the terminal (pino writes
      // asynchronously, so the line may follow the banner by a moment).
      for (let i = 0; i < 100 && !/"level":40.*"host":"0\.0\.0\.0"/.test(demo.stdout()); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(demo.stdout()).toMatch(/"level":40.*"host":"0\.0\.0\.0"/);
    } finally {
      await demo.stop();
    }
  }, 60_000);

  it('should default to 127.0.0.1 in demo mode and 0.0.0.0 with backends; an explicit HOST or host wins', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ GATEWAY_BACKENDS: 'east=nomad@http://10.0.0.1:4646' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '10.0.0.5', NOMAD_ADDR: 'http://10.0.0.1:4646' }).host).toBe('10.0.0.5');
  });

  it('should warn for every host but loopback', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(demoExposureWarning(h)).toBeUndefined();
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'gateway.example.com'])
      expect(demoExposureWarning(h)).toContain(`listening on ${h}`);
  });
});
