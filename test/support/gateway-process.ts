/** The gateway's CLI entry (`npm start`'s server/main.ts) as a child process, for signal and process-level tests. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { until } from './until';

const root = join(__dirname, '..', '..');

/** server/main.ts on a free loopback port with `env` added (no backends: demo mode), its stdout collected. */
export function startGatewayProcess(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: root, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const waitFor = (line: RegExp, timeoutMs = 30_000): Promise<void> => until(() => line.test(out), () => `${line} in the gateway's output:\n${out}`, timeoutMs, 100);
  return { child, output: () => out, exited: once(child, 'exit'), waitFor };
}
