/**
 * A config mistake must stop start-up, never start demo mode (issue 17, item 11, docs/reliability.md
 * R11): unknown variables under the gateway's prefixes and unknown config-file keys at every level
 * are refused with exit code 2, naming the closest known name; production never starts the demo.
 * The gateway runs as a child process (`node --import tsx server/main.ts`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../server/config';
import { SETTINGS } from '../../server/config-names';

const root = join(__dirname, '..', '..');

/** The gateway's environment in these tests: the test process's, minus anything that configures backends or names. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  for (const k of Object.keys(env)) if (/^(GATEWAY_|NOMAD_|OS_)/.test(k)) delete env[k];
  return env;
}

/** Runs the gateway to its exit (a gateway that starts is killed after 30 s: the assertion then shows it). */
const run = (env: NodeJS.ProcessEnv, args: string[] = []) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], { cwd: root, env: { ...baseEnv(), ...env }, encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-config-')), 'gateway.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
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
    expect(r.stderr).toContain('configuration error: GATEWAY_BACKEND: is not a known environment variable (closest known: GATEWAY_BACKENDS)');
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
    expect(r.stderr).toContain('configuration error: backends: none is configured, and with NODE_ENV=production the gateway never starts its demo backends');
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
    [{ GATEWAY_BACKENDS: 'east=nomad@http://x:4646', GATEWAY_BACKEND_EAST_TOKNE: 't' }, 'GATEWAY_BACKEND_EAST_TOKNE', 'GATEWAY_BACKEND_EAST_TOKEN'],
    // A per-backend variable of a backend that is not configured.
    [{ GATEWAY_BACKENDS: 'east=nomad@http://x:4646', GATEWAY_BACKEND_WEST_TOKEN: 't' }, 'GATEWAY_BACKEND_WEST_TOKEN', 'GATEWAY_BACKEND_EAST_TOKEN'],
    [{ GATEWAY_BACKEND_EAST_TOKEN: 't' }, 'GATEWAY_BACKEND_EAST_TOKEN', 'GATEWAY_BACKEND_<ID>_TOKEN'],
  ])('should refuse %j naming %s and the closest known name %s', (env, name, closest) => {
    const err = refusal(() => loadConfig(env));
    expect(err.setting).toBe(name);
    expect(err.message).toContain(`(closest known: ${closest})`);
  });

  it('should list every unknown name at once', () => {
    const err = refusal(() => loadConfig({ MAX_DEPHT: '3', WS_KEEPALIVE: '1' }));
    expect(err.message).toMatch(/MAX_DEPHT.*closest known: MAX_DEPTH.*also WS_KEEPALIVE.*closest known: WS_KEEPALIVE_MS/);
  });

  it('should accept the per-backend variables of configured backends (id upper-cased, - as _)', () => {
    expect(loadConfig({ GATEWAY_BACKENDS: 'west-2=nomad@http://x:4646', GATEWAY_BACKEND_WEST_2_TOKEN: 't' }).backends[0]).toMatchObject({ id: 'west-2', token: 't' });
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
    [{ backends: [{ id: 'a', kind: 'openstack', url: 'http://k/v3', auth: { method: 'password', user: 'u' } }] }, 'backends[0].auth.user', 'backends[0].auth.username'],
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
