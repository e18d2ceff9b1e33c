/** Shared by the benchmarks: child processes that announce readiness on stdout, and the machine facts every result carries. */
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';

export const root = join(__dirname, '..');

/** Every process started, so a failed run still stops them (else they hold the caller's pipes open). */
export const started: ChildProcess[] = [];

/** Starts `node …nodeArgs --import tsx …args` and waits until its stdout matches `ready`. */
export function start(args: string[], env: Record<string, string>, ready: RegExp, nodeArgs: string[] = []): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${buf}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = ready.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${buf}`)));
  });
}

/** Kills whatever is still running (after a failed run). */
export function killStarted(): void {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
}

/** The machine-facts table (markdown) every result section starts with. */
export function machineFacts(): string {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  } catch {
    // not a git checkout
  }
  const cpu = cpus();
  return `| machine | |
|---|---|
| CPU | ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} |
| memory | ${(totalmem() / 2 ** 30).toFixed(1)} GiB |
| OS | ${platform()} ${release()} |
| Node.js | ${process.version} |
| commit | ${commit} |`;
}
