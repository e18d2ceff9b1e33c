/** The gateway's CLI entry (`npm start`'s server/main.ts) as a child process, for signal and process-level tests. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { until } from './until';

const root = join(__dirname, '..', '..');

/** Options of {@link startGatewayProcess}. */
export interface GatewayProcessOptions {
  /** Drop the OTEL_* variables the test process inherited, so only `env`'s reach the gateway. Default false. */
  withoutInheritedOtel?: boolean;
  /** Node arguments after `--import tsx`, before server/main.ts (e.g. `['--require', hook]`). Default none. */
  nodeArgs?: string[];
  /** The source tree to run server/main.ts of (a copy of the repository's). Default the repository. */
  tree?: string;
}

/** server/main.ts on a free loopback port with `env` added (no backends: demo mode), its stdout and stderr collected. */
export function startGatewayProcess(env: Record<string, string> = {}, options: GatewayProcessOptions = {}) {
  const inherited = options.withoutInheritedOtel
    ? Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')))
    : process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', ...(options.nodeArgs ?? []), 'server/main.ts'], {
    cwd: options.tree ?? root,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const waitFor = (line: RegExp, timeoutMs = 30_000): Promise<void> =>
    until(
      () => line.test(out),
      () => `${line} in the gateway's output:\n${out}`,
      timeoutMs,
      100,
    );
  // 'close', not 'exit', before reading the output after the end: the last stderr chunk may come after 'exit'.
  const closed = once(child, 'close');
  /** Waits for "ready at <url>" and answers the URL; throws with stderr if the gateway exits first. */
  const serving = async (timeoutMs = 60_000): Promise<string> => {
    await until(() => /ready at (\S+)/.test(out) || child.exitCode !== null, 'the gateway to serve', timeoutMs);
    if (child.exitCode !== null) throw new Error(`gateway exited: ${err}`);
    return /ready at (\S+)/.exec(out)![1]!;
  };
  /** SIGTERM if still running, then waits for 'close'. */
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await closed;
  };
  return { child, output: () => out, errors: () => err, exited: once(child, 'exit'), closed, waitFor, serving, stop };
}
