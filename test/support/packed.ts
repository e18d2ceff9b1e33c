/**
 * The package as users get it: `npm pack` of this repo, installed with `npm install --omit=dev
 * --offline` into an empty folder (from the npm cache that `npm ci` filled), and its
 * `volume-gateway` command run as a child process.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { consumerLock } from '../../scripts/shrinkwrap';

const ROOT = join(__dirname, '..', '..');

/** What `npm` prints, on failure, with the command. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  // Jest sets NODE_ENV=test; npm and the build should see the shell's environment.
  const { NODE_ENV: _jest, ...env } = process.env;
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${out}`)),
    );
  });
}

/** `npm pack` of the repo into `dir` (its prepack builds when the sources changed); the tarball's path. */
export async function packRepo(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await run('npm', ['pack', '--pack-destination', dir], ROOT);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack wrote no tarball into ${dir}`);
  return join(dir, tgz);
}

/** The paths in a tarball, without npm's `package/` prefix. */
export function tarballFiles(tgz: string): string[] {
  return execFileSync('tar', ['tzf', tgz], { encoding: 'utf8', maxBuffer: 16 * 1_048_576 })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^package\//, ''));
}

export interface Installed {
  /** The folder, with `node_modules/.bin/volume-gateway`. */
  dir: string;
  /** The package's own folder (`node_modules/volume-gateway`). */
  packageDir: string;
  /** Everything npm printed (its warnings). */
  npmOutput: string;
}

/**
 * Installs `tgz` into the empty folder `dir` with `npm install --omit=dev --offline`. The folder
 * gets the lockfile that pins the tarball's shrinkwrap (scripts/shrinkwrap.ts: npm does not read a
 * shrinkwrap from a tarball named on the command line, and would ask the registry).
 */
export async function installTarball(tgz: string, dir: string): Promise<Installed> {
  mkdirSync(dir, { recursive: true });
  const shrinkwrap = JSON.parse(
    execFileSync('tar', ['xzfO', tgz, 'package/npm-shrinkwrap.json'], { encoding: 'utf8', maxBuffer: 64 * 1_048_576 }),
  );
  const local = join(dir, basename(tgz));
  copyFileSync(tgz, local);
  const { packageJson, packageLock } = consumerLock(local, shrinkwrap);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(packageJson, null, 2));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(packageLock, null, 2));
  const npmOutput = await run('npm', ['install', '--omit=dev', '--offline', '--no-audit', '--no-fund'], dir);
  return { dir, packageDir: join(dir, 'node_modules', 'volume-gateway'), npmOutput };
}

export interface GatewayProcess {
  child: ChildProcess;
  /** The GraphQL endpoint it announced. */
  url: string;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs the installed `volume-gateway` command on a free loopback port with only `env` (and PATH,
 * so its `#!/usr/bin/env node` finds the node running the tests), until it prints its URL.
 */
export function startInstalled(
  installed: Installed,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<GatewayProcess> {
  const bin = join(installed.dir, 'node_modules', '.bin', 'volume-gateway');
  const child = spawn(bin, [], {
    cwd: installed.dir,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: installed.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`volume-gateway did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (): void => {
      const m = /ready at (\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve({ child, url: m[1]!, output: () => out, stop });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`volume-gateway exited with ${code}:\n${out}`));
    });
  });
}
