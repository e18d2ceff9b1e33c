/**
 * R16 of docs/reliability.md: configuration mistakes outside the gateway's own variable prefixes.
 * Starts `server/main.ts` (a child process on a free port, demo mode: no backend) once per
 * mistake, with the environment this script runs in (under `npm run attacks`, npm's own
 * `npm_*` variables and the shell's), and prints what each start gets: the exit code and the
 * message, or "started" when it served (then it is stopped).
 *
 * Meant for `npm run attacks` (scripts/replay-attacks.ts); needs nothing running.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** A TCP port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** This process's environment without what would configure the gateway (backends, its own settings). */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(GATEWAY_|NOMAD_|OS_|OTEL_)/.test(k) || k === 'NODE_ENV') delete env[k];
  return env;
}

interface Start {
  /** Exit code, or null when it started (and was stopped). */
  code: number | null;
  /** The configuration error's line, the start failure's first line, or the ready line. */
  said: string;
}

/** Runs the gateway with `env` (and `args`) until it exits or serves; one that serves is stopped. */
function start(env: Record<string, string>, args: string[] = []): Promise<Start> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    cwd: ROOT,
    env: { ...inheritedEnv(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DEMO_ACTIVITY: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Volume gateway ready at \S+/.exec(out);
      if (m && child.exitCode === null) {
        child.kill('SIGTERM');
        resolve({ code: null, said: m[0] });
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const line =
        err.split('\n').find((l) => l.startsWith('volume-gateway:')) ??
        err.split('\n').find((l) => l.trim() !== '') ??
        '';
      resolve({ code, said: line.trim() });
    });
  });
}

/** A config file whose first bytes are a UTF-8 byte-order mark (as Windows editors save one). */
function bomFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-r16-')), 'gateway.json');
  writeFileSync(path, `\uFEFF${JSON.stringify(content)}`);
  return path;
}

/** Replays R16 and returns the rows of a Markdown table (header first), ready to print. */
export async function replayConfigTypos(): Promise<string[]> {
  const port = await freePort();
  const cases: Array<[string, Record<string, string>, string[]?]> = [
    [
      'TRUSTED_DOCUMENT=/etc/gateway/manifest.json (for TRUSTED_DOCUMENTS)',
      { TRUSTED_DOCUMENT: '/etc/gateway/manifest.json' },
    ],
    ['INTROSPECTON=false (for INTROSPECTION)', { INTROSPECTON: 'false' }],
    ['EXECUTION_ENGIN=graphql-js (for EXECUTION_ENGINE)', { EXECUTION_ENGIN: 'graphql-js' }],
    ['HEADER_TIMEOUT_MS=5000 (for HEADERS_TIMEOUT_MS)', { HEADER_TIMEOUT_MS: '5000' }],
    ['LOG_MAX_BUFFER_BYTE=65536 (for LOG_MAX_BUFFER_BYTES)', { LOG_MAX_BUFFER_BYTE: '65536' }],
    ['MANAGEMENT_PROT=9464 (for MANAGEMENT_PORT)', { MANAGEMENT_PROT: '9464' }],
    ['PROT=4630 (for PORT)', { PROT: '4630' }],
    [`MANAGEMENT_PORT equal to PORT (${port})`, { PORT: String(port), MANAGEMENT_PORT: String(port) }],
    ['CORS_CREDENTIALS=true with WS_ALLOWED_ORIGINS=*', { CORS_CREDENTIALS: 'true', WS_ALLOWED_ORIGINS: '*' }],
    ['TRUSTED_DOCUMENTS_REQUIRE_ID=true without TRUSTED_DOCUMENTS', { TRUSTED_DOCUMENTS_REQUIRE_ID: 'true' }],
    ['a config file starting with a UTF-8 byte-order mark', {}, ['--config', bomFile({ logLevel: 'warn' })]],
    [
      'a Kubernetes service link GATEWAY_PORT=tcp://10.0.0.7:4000 (must start)',
      {
        GATEWAY_PORT: 'tcp://10.0.0.7:4000',
        GATEWAY_SERVICE_HOST: '10.0.0.7',
        VOLUME_GATEWAY_PORT: 'tcp://10.0.0.8:80',
      },
    ],
  ];
  const rows = ['| start with | exit code | what it said |', '|---|---|---|'];
  for (const [name, env, args] of cases) {
    const r = await start(env, args);
    rows.push(`| ${name} | ${r.code === null ? 'none: started' : r.code} | ${r.said.replace(/\|/g, '\\|')} |`);
  }
  return rows;
}

if (require.main === module) {
  replayConfigTypos().then(
    (rows) => console.log(rows.join('\n')),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
