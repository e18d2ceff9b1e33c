/**
 * A config mistake must stop start-up, never start demo mode (issue 17, item 11, docs/reliability.md
 * R11): unknown variables under the gateway's prefixes and unknown config-file keys at every level
 * are refused with exit code 2, naming the closest known name; production never starts the demo.
 * Outside those prefixes (issue 27, item 3, R16) a variable that reads as a slip of a setting's is
 * refused too, while what platforms set never is, and settings that conflict are refused.
 * The gateway runs as a child process (`node --import tsx server/main.ts`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { SETTINGS } from '../../server/config-names';
import { isNearMiss } from '../../server/config-near-names';
import { CI_NPM, KUBERNETES_POD, NOMAD_TASK } from '../support/platform-env';

const root = join(__dirname, '..', '..');

/** The gateway's environment in these tests: the test process's, minus anything that configures backends or names. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  for (const k of Object.keys(env)) if (/^(GATEWAY_|NOMAD_|OS_)/.test(k)) delete env[k];
  return env;
}

/** Runs the gateway to its exit (a gateway that starts is killed after 30 s: the assertion then shows it). */
const run = (env: NodeJS.ProcessEnv, args: string[] = []) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    cwd: root,
    env: { ...baseEnv(), ...env },
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-config-')), 'gateway.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/**
 * Runs the gateway in `env` alone (nothing inherited) until it exits, or serves: then it is
 * stopped, and `code` is null. Asynchronous, so that several run at once.
 */
function start(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // Serving is all this tells; a graceful stop would only add its drain and pool closes.
      if (/ready at /.test(stdout) && child.exitCode === null) child.kill('SIGKILL');
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: /ready at /.test(stdout) ? null : (code ?? (signal as unknown as number)), stdout, stderr });
    });
  });
}

/** What the demo prints when it starts: none of it may appear. */
function expectNoDemo(out: string): void {
  expect(out).not.toContain('Demo mode');
  expect(out).not.toContain('management');
  expect(out).not.toContain('demo-east-management');
  expect(out).not.toContain('ready at');
}

const refusal = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError');
};

describe('a config mistake stops start-up (child process)', () => {
  it('should exit 2 on GATEWAY_BACKEND (a missing S) under NODE_ENV=production, naming GATEWAY_BACKENDS, with no simulator started', () => {
    const r = run({ NODE_ENV: 'production', GATEWAY_BACKEND: 'east=nomad@http://127.0.0.1:4646' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'configuration error: GATEWAY_BACKEND: is not a known environment variable (closest known: GATEWAY_BACKENDS)',
    );
    expectNoDemo(r.stdout + r.stderr);
  }, 60_000);

  it('should exit 2 on the same typo without NODE_ENV=production too: a typo is never a request for the demo', () => {
    const r = run({ GATEWAY_BACKEND: 'east=nomad@http://127.0.0.1:4646' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('GATEWAY_BACKENDS');
    expectNoDemo(r.stdout + r.stderr);
  }, 60_000);

  it('should exit 2 under NODE_ENV=production with no backend at all, saying the demo is never started there', () => {
    const r = run({ NODE_ENV: 'production' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'configuration error: backends: none is configured, and with NODE_ENV=production the gateway never starts its demo backends',
    );
    expectNoDemo(r.stdout + r.stderr);
  }, 60_000);

  it('should exit 2 on {"prot": 4630} in the config file, naming port', () => {
    const path = file({ prot: 4630 });
    const r = run({}, ['--config', path]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`configuration error: prot: is not a known key in ${path} (closest known: port)`);
    expectNoDemo(r.stdout + r.stderr);
  }, 60_000);

  it('should exit 2 on a nested unknown key, naming the closest at its level', () => {
    const path = file({ backends: [{ id: 'east', kind: 'nomad', url: 'http://127.0.0.1:1', tokne: 'x' }] });
    const r = run({ NODE_ENV: 'production' }, ['--config', path]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('backends[0].tokne: is not a known key');
    expect(r.stderr).toContain('(closest known: backends[0].token)');
  }, 60_000);
});

describe('unknown environment variables', () => {
  it.each([
    [{ MAX_DEPHT: '3' }, 'MAX_DEPHT', 'MAX_DEPTH'],
    [{ WS_MAX_CONNECTION: '5' }, 'WS_MAX_CONNECTION', 'WS_MAX_CONNECTIONS'],
    [{ LIVE_ACCESS_TTL: '5' }, 'LIVE_ACCESS_TTL', 'LIVE_ACCESS_TTL_MS'],
    [{ RATE_LIMIT_CALLER_RATE: '5' }, 'RATE_LIMIT_CALLER_RATE', 'RATE_LIMIT_CALLER_RPS'],
    [{ CORS_ORIGIN: '*' }, 'CORS_ORIGIN', 'CORS_ORIGINS'],
    [{ REDIS_URI: 'redis://r' }, 'REDIS_URI', 'REDIS_URL'],
    [{ TRUSTED_DOCUMENTS_REQUIRE_IDS: '1' }, 'TRUSTED_DOCUMENTS_REQUIRE_IDS', 'TRUSTED_DOCUMENTS_REQUIRE_ID'],
    [{ DEMO_ACTIVITY_INTERVAL: '100' }, 'DEMO_ACTIVITY_INTERVAL', 'DEMO_ACTIVITY_INTERVAL_MS'],
    [{ SHUTDOWN_GRACE: '100' }, 'SHUTDOWN_GRACE', 'SHUTDOWN_GRACE_MS'],
    [{ GATEWAY_CONFIG_FILE: '/x.json' }, 'GATEWAY_CONFIG_FILE', 'GATEWAY_CONFIG'],
    [
      { GATEWAY_BACKENDS: 'east=nomad@http://x:4646', GATEWAY_BACKEND_EAST_TOKNE: 't' },
      'GATEWAY_BACKEND_EAST_TOKNE',
      'GATEWAY_BACKEND_EAST_TOKEN',
    ],
    // A per-backend variable of a backend that is not configured.
    [
      { GATEWAY_BACKENDS: 'east=nomad@http://x:4646', GATEWAY_BACKEND_WEST_TOKEN: 't' },
      'GATEWAY_BACKEND_WEST_TOKEN',
      'GATEWAY_BACKEND_EAST_TOKEN',
    ],
    [{ GATEWAY_BACKEND_EAST_TOKEN: 't' }, 'GATEWAY_BACKEND_EAST_TOKEN', 'GATEWAY_BACKEND_<ID>_TOKEN'],
  ])('should refuse %j naming %s and the closest known name %s', (env, name, closest) => {
    const err = refusal(() => loadConfig(env));
    expect(err.setting).toBe(name);
    expect(err.message).toContain(`(closest known: ${closest})`);
  });

  it('should list every unknown name at once', () => {
    const err = refusal(() => loadConfig({ MAX_DEPHT: '3', WS_KEEPALIVE: '1' }));
    expect(err.message).toMatch(
      /MAX_DEPHT.*closest known: MAX_DEPTH.*also WS_KEEPALIVE.*closest known: WS_KEEPALIVE_MS/,
    );
  });

  it('should accept the per-backend variables of configured backends (id upper-cased, - as _)', () => {
    expect(
      loadConfig({ GATEWAY_BACKENDS: 'west-2=nomad@http://x:4646', GATEWAY_BACKEND_WEST_2_TOKEN: 't' }).backends[0],
    ).toMatchObject({ id: 'west-2', token: 't' });
  });

  it('should never check HOSTNAME, exact names that are not prefixes, OS_*, NOMAD_*, OTEL_* or Kubernetes service links', () => {
    const env = {
      HOSTNAME: 'gateway-7d9f',
      HOST_IP: '10.0.0.3',
      PORTAL: 'x',
      OS_CLOUD: 'mine',
      OS_IDENTITY_API_VERSION: '3',
      NOMAD_ALLOC_ID: 'a',
      NOMAD_REGION: 'global',
      OTEL_SERVICE_NAME: 'gw',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      // A Service named `redis` and one named `gateway` in the same namespace.
      REDIS_PORT: 'tcp://10.0.0.9:6379',
      REDIS_SERVICE_HOST: '10.0.0.9',
      REDIS_SERVICE_PORT: '6379',
      REDIS_PORT_6379_TCP: 'tcp://10.0.0.9:6379',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.9',
      GATEWAY_SERVICE_PORT_HTTP: '80',
      GATEWAY_PORT_80_TCP_PROTO: 'tcp',
      NODE_ENV: 'development',
    };
    expect(loadConfig(env).backends).toEqual([]);
  });
});

describe('unknown config-file keys', () => {
  it.each([
    [{ prot: 4630 }, 'prot', 'port'],
    [{ http: { maxHeaderByte: 1 } }, 'http.maxHeaderByte', 'http.maxHeaderBytes'],
    [{ http: { rateLimit: { caler: { burst: 1 } } } }, 'http.rateLimit.caler', 'http.rateLimit.caller'],
    [{ http: { rateLimit: { caller: { bursts: 1 } } } }, 'http.rateLimit.caller.bursts', 'http.rateLimit.caller.burst'],
    [{ http: { trustedDocuments: { paths: 'x' } } }, 'http.trustedDocuments.paths', 'http.trustedDocuments.path'],
    [{ redis: { url: 'redis://r', keyprefix: 'x' } }, 'redis.keyprefix', 'redis.keyPrefix'],
    [{ ws: { keepAlive: 1 } }, 'ws.keepAlive', 'ws.keepAliveMs'],
    [{ live: { maxQueue: 1 } }, 'live.maxQueue', 'live.maxQueued'],
    [{ limits: { maxDepht: 1 } }, 'limits.maxDepht', 'limits.maxDepth'],
    [
      { backends: [{ id: 'a', kind: 'openstack', url: 'http://k/v3', auth: { method: 'password', user: 'u' } }] },
      'backends[0].auth.user',
      'backends[0].auth.username',
    ],
    [{ backend: [{ id: 'a', kind: 'nomad', url: 'http://n:4646' }] }, 'backend', 'backends'],
  ])('should refuse %j naming %s and the closest known key %s', (content, name, closest) => {
    const err = refusal(() => loadConfig({}, file(content)));
    expect(err.setting).toBe(name);
    expect(err.message).toContain(`(closest known: ${closest})`);
  });

  it('should take a file without backends as no backend configuration: the demo outside production, a refusal in production', () => {
    const path = file({ port: 4001 });
    expect(loadConfig({}, path).backends).toEqual([]);
    expect(refusal(() => loadConfig({ NODE_ENV: 'production' }, path)).setting).toBe('backends');
  });

  it('should refuse an empty GATEWAY_BACKENDS rather than start the demo', () => {
    expect(refusal(() => loadConfig({ GATEWAY_BACKENDS: ' ' })).setting).toBe('GATEWAY_BACKENDS');
  });
});

describe('the list of settings', () => {
  const doc = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
  /** First column of the settings tables. */
  const documented = new Set([...doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
  const mentioned = new Set([...doc.matchAll(/`([A-Z][A-Z0-9_]+)[`=]/g)].map((m) => m[1]!));
  const listed = SETTINGS.flatMap(([env]) => (env === null || env.includes('<ID>') ? [] : [env]));

  it('should document every variable it lists in docs/configuration.md', () => {
    expect(listed.filter((n) => !mentioned.has(n))).toEqual([]);
  });

  it('should list every variable docs/configuration.md documents', () => {
    expect([...documented].filter((n) => !listed.includes(n))).toEqual([]);
  });
});

describe('variables outside the owned prefixes (issue 27, item 3; docs/reliability.md R16)', () => {
  /** The gateway's own settings of deploy/ (a backend that never answers: start-up does not wait on it), on a free loopback port. */
  const gateway = {
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    GATEWAY_BACKENDS: 'east=nomad@http://127.0.0.1:9',
  };

  // Each case is its own gateway process; they run at once (start-up is mostly module loading).
  const SLIPS = [
    ['TRUSTED_DOCUMENT', '/etc/gateway/manifest.json', 'TRUSTED_DOCUMENTS'],
    ['INTROSPECTON', 'false', 'INTROSPECTION'],
    ['EXECUTION_ENGIN', 'graphql-js', 'EXECUTION_ENGINE'],
    ['HEADER_TIMEOUT_MS', '5000', 'HEADERS_TIMEOUT_MS'],
    ['LOG_MAX_BUFFER_BYTE', '65536', 'LOG_MAX_BUFFER_BYTES'],
    ['MANAGEMENT_PROT', '9464', 'MANAGEMENT_PORT'],
    ['PROT', '4630', 'PORT'],
  ] as const;

  it(`should exit 2 (child processes) on each of ${SLIPS.map(([n]) => n).join(', ')}, naming it and the setting it is close to`, async () => {
    const runs = await Promise.all(SLIPS.map(([name, value]) => start({ ...CI_NPM, ...gateway, [name]: value })));
    runs.forEach((r, i) => {
      const [name, , setting] = SLIPS[i]!;
      expect([name, r.code]).toEqual([name, 2]);
      expect(r.stderr).toContain(
        `configuration error: ${name}: is not a known environment variable (closest known: ${setting}); it reads as a misspelling of that setting`,
      );
    });
  }, 120_000);

  it("should pass the name check in a Kubernetes pod with service links, a Nomad task's environment and npm test on a CI runner", () => {
    for (const platform of [KUBERNETES_POD, NOMAD_TASK, CI_NPM])
      expect(loadConfig({ ...platform, ...gateway }).backends.map((b) => b.id)).toEqual(['east']);
  });

  it('should start (child process) in all three of those environments at once', async () => {
    const r = await start({ ...KUBERNETES_POD, ...NOMAD_TASK, ...CI_NPM, ...gateway });
    expect([r.stderr, r.code]).toEqual(['', null]);
    expect(r.stdout).toContain('Volume gateway ready at http://127.0.0.1:');
  }, 60_000);

  it('should take a slip for a setting one letter away, or by its words in another order, with an S more or less, or one word more or fewer', () => {
    for (const [slip, known] of [
      ['MANAGMENT_PORT', 'MANAGEMENT_PORT'],
      ['LOGLEVEL', 'LOG_LEVEL'],
      ['TIMEOUT_HEADERS_MS', 'HEADERS_TIMEOUT_MS'],
      ['HEADERS_TIMEOUT', 'HEADERS_TIMEOUT_MS'],
      ['LOG_BUFFER_BYTES', 'LOG_MAX_BUFFER_BYTES'],
      ['EXECUTION_ENGINES', 'EXECUTION_ENGINE'],
    ]) {
      expect([slip, isNearMiss(slip!, known!)]).toEqual([slip, true]);
      expect(refusal(() => loadConfig({ [slip!]: '1' })).message).toContain(`(closest known: ${known})`);
    }
  });

  it("should never take another program's name for a slip: two letters away, a word before the first, a word after a one-word name", () => {
    for (const [name, known] of [
      ['SSL_CERT_FILE', 'TLS_CERT_FILE'],
      ['HOME', 'HOST'],
      ['PATH', 'PORT'],
      ['HOST_IP', 'HOST'],
      ['APP_PORT', 'PORT'],
      ['PORT_HTTP', 'PORT'],
      ['VOLUME_GATEWAY_PORT', 'PORT'],
      ['APP_LOG_LEVEL', 'LOG_LEVEL'],
    ]) {
      expect([name, isNearMiss(name!, known!)]).toEqual([name, false]);
    }
    expect(
      loadConfig({ SSL_CERT_FILE: '/etc/ssl/cert.pem', HOST_IP: '10.0.0.1', APP_PORT: '8080', Port: '1', prot: '1' })
        .port,
    ).toBe(4000);
  });

  it("should take a bare <SERVICE>_PORT for a Kubernetes link only with a link's value", () => {
    expect(loadConfig({ MANAGMENT_PORT: 'tcp://10.96.0.9:9464' }).port).toBe(4000);
    expect(refusal(() => loadConfig({ MANAGMENT_PORT: '9464' })).setting).toBe('MANAGMENT_PORT');
  });
});

describe('settings that conflict (issue 27, item 3; docs/reliability.md R16)', () => {
  it('should exit 2 (child process) when MANAGEMENT_PORT is PORT, naming both, instead of EADDRINUSE', async () => {
    const r = await start({ ...baseEnv(), PORT: '4711', MANAGEMENT_PORT: '4711' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('configuration error: MANAGEMENT_PORT: is 4711, the same port as PORT');
    expect(r.stderr).not.toContain('EADDRINUSE');
  }, 60_000);

  it('should name the file keys when the file sets them, and allow port 0 twice (each an ephemeral port)', () => {
    expect(refusal(() => loadConfig({}, file({ port: 4700, managementPort: 4700 }))).message).toMatch(
      /^managementPort: is 4700, the same port as port/,
    );
    expect(loadConfig({ PORT: '0', MANAGEMENT_PORT: '0' }).managementPort).toBe(0);
  });

  it('should refuse CORS_CREDENTIALS=true with * in WS_ALLOWED_ORIGINS: browser origins are one list, CORS included', () => {
    expect(refusal(() => loadConfig({ CORS_CREDENTIALS: 'true', WS_ALLOWED_ORIGINS: '*' })).message).toMatch(
      /^CORS_CREDENTIALS: cannot be true with the origin "\*" in WS_ALLOWED_ORIGINS/,
    );
    expect(
      loadConfig({ CORS_CREDENTIALS: 'true', WS_ALLOWED_ORIGINS: 'https://console.example.com' }).http.cors.credentials,
    ).toBe(true);
  });

  it('should refuse TRUSTED_DOCUMENTS_REQUIRE_ID without TRUSTED_DOCUMENTS: an allowlist believed on would be off', () => {
    expect(refusal(() => loadConfig({ TRUSTED_DOCUMENTS_REQUIRE_ID: 'true' })).message).toMatch(
      /^TRUSTED_DOCUMENTS_REQUIRE_ID: is true, but TRUSTED_DOCUMENTS \(file: http.trustedDocuments.path\) is not set/,
    );
  });
});

describe('the config file', () => {
  it('should read a file that starts with a UTF-8 byte-order mark', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-config-')), 'gateway.json');
    writeFileSync(path, `\uFEFF${JSON.stringify({ port: 4702, http: { maxHeaderBytes: 8192 } })}`);
    const c = loadConfig({}, path);
    expect([c.port, c.http.maxHeaderBytes]).toEqual([4702, 8192]);
  });
});
