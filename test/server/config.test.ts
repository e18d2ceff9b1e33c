import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSetting, settingLeaves, ConfigError } from '../../adapters/contract/settings';
import { BACKEND_MODULES } from '../../server/kinds';
import { loadConfig } from '../../server/config';
import { GATEWAY_SETTINGS } from '../../server/config-definition';
import { OTEL_VARIABLES } from '../../server/tracing/settings';

const root = join(__dirname, '..', '..');

describe('configuration', () => {
  it('should read backends from GATEWAY_BACKENDS with per-backend settings', () => {
    const c = loadConfig({
      GATEWAY_BACKENDS: 'east=nomad@http://10.0.0.1:4646, west-2=nomad@https://nomad.example.com/prefix/',
      GATEWAY_BACKEND_WEST_2_TOKEN: 'svc-token',
      GATEWAY_BACKEND_EAST_TIMEOUT_MS: '2500',
      GATEWAY_BACKEND_EAST_DIAGNOSIS_STUCK_CLAIM_MS: '90000',
      PORT: '8080',
    });
    expect(c.port).toBe(8080);
    expect(c.backends).toEqual([
      {
        id: 'east',
        kind: 'nomad',
        url: 'http://10.0.0.1:4646',
        token: undefined,
        timeoutMs: 2500,
        maxConnections: 16,
        readRetries: 2,
        diagnosis: { stuckClaimMs: 90000, missingPluginMs: 120000 },
      },
      {
        id: 'west-2',
        kind: 'nomad',
        url: 'https://nomad.example.com/prefix',
        token: 'svc-token',
        timeoutMs: 10000,
        maxConnections: 16,
        readRetries: 2,
        diagnosis: { stuckClaimMs: 660000, missingPluginMs: 120000 },
      },
    ]);
  });

  it('should drain 5 s on SIGTERM by default, not in demo mode, and take SHUTDOWN_DRAIN_MS', () => {
    expect(loadConfig({ GATEWAY_BACKENDS: 'east=nomad@http://10.0.0.1:4646' }).shutdownDrainMs).toBe(5000);
    expect(loadConfig({}).shutdownDrainMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '1500' }).shutdownDrainMs).toBe(1500);
    expect(
      loadConfig({ GATEWAY_BACKENDS: 'east=nomad@http://10.0.0.1:4646', SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs,
    ).toBe(0);
  });

  it('should read NOMAD_ADDR and NOMAD_TOKEN as one backend called nomad', () => {
    expect(loadConfig({ NOMAD_ADDR: 'http://127.0.0.1:4646', NOMAD_TOKEN: 't' }).backends).toEqual([
      expect.objectContaining({ id: 'nomad', kind: 'nomad', url: 'http://127.0.0.1:4646', token: 't' }),
    ]);
  });

  it('should read a config file, with the environment winning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-'));
    const file = join(dir, 'c.json');
    writeFileSync(
      file,
      JSON.stringify({
        port: 5000,
        logLevel: 'debug',
        backends: [{ id: 'a', kind: 'nomad', url: 'http://a:4646', maxConnections: 4 }],
      }),
    );
    const c = loadConfig({ PORT: '6000' }, file);
    expect(c).toMatchObject({ port: 6000, logLevel: 'debug', backends: [{ id: 'a', maxConnections: 4 }] });
  });

  it('should read an OpenStack region from GATEWAY_BACKENDS with a password service credential', () => {
    const c = loadConfig({
      GATEWAY_BACKENDS: 'os=openstack@https://keystone.example.com:5000/v3',
      GATEWAY_BACKEND_OS_REGION: 'RegionTwo',
      GATEWAY_BACKEND_OS_USERNAME: 'gateway',
      GATEWAY_BACKEND_OS_PASSWORD: 'pw',
      GATEWAY_BACKEND_OS_PROJECT_NAME: 'service',
    });
    expect(c.backends).toEqual([
      {
        id: 'os',
        kind: 'openstack',
        url: 'https://keystone.example.com:5000/v3',
        region: 'RegionTwo',
        interface: 'public',
        auth: {
          method: 'password',
          username: 'gateway',
          password: 'pw',
          projectName: 'service',
          userDomainName: undefined,
          projectDomainName: undefined,
        },
        operationTimeoutMs: 120000,
        watchFastMs: 500,
        watchSlowMs: 10000,
        watchTransitionWindowMs: 30000,
        // The volume doctor's defaults (adapters/openstack/diagnosis/thresholds.ts); the drift grace follows watchSlowMs.
        doctor: {
          creatingMs: 180000,
          attachingMs: 180000,
          detachingMs: 220000,
          extendingMs: 180000,
          deletingMs: 180000,
          copyBaseMs: 300000,
          copyPerGiBMs: 30000,
          driftGraceMs: undefined,
        },
        timeoutMs: 10000,
        maxConnections: 16,
        readRetries: 2,
      },
    ]);
  });

  it('should read an openrc (OS_* variables) as one backend called openstack, beside NOMAD_ADDR', () => {
    const c = loadConfig({
      NOMAD_ADDR: 'http://n:4646',
      OS_AUTH_URL: 'http://k:5000/v3',
      OS_APPLICATION_CREDENTIAL_ID: 'ac',
      OS_APPLICATION_CREDENTIAL_SECRET: 's',
      OS_INTERFACE: 'internal',
    });
    expect(c.backends.map((b) => b.id)).toEqual(['nomad', 'openstack']);
    expect(c.backends[1]).toMatchObject({
      kind: 'openstack',
      interface: 'internal',
      region: 'RegionOne',
      auth: { method: 'applicationCredential', id: 'ac', secret: 's' },
    });
  });

  it('should start in demo mode when no backend is configured', () => {
    expect(loadConfig({}).backends).toEqual([]);
  });

  it.each([
    [{ GATEWAY_BACKENDS: 'east=nomad@not-a-url' }, 'backends[0].url'],
    [{ GATEWAY_BACKENDS: 'east=nomad@ftp://x' }, 'backends[0].url'],
    [{ GATEWAY_BACKENDS: 'east=consul@http://x' }, 'backends[0].kind'],
    [{ GATEWAY_BACKENDS: 'east' }, 'GATEWAY_BACKENDS'],
    [{ GATEWAY_BACKENDS: 'a=nomad@http://x,a=nomad@http://y' }, 'backends'],
    [{ GATEWAY_BACKENDS: 'bad/id=nomad@http://x' }, 'backends[0].id'],
    [{ NOMAD_ADDR: 'http://user:pw@x:4646' }, 'backends[0].url'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ GATEWAY_BACKENDS: 'a=nomad@http://x', GATEWAY_BACKEND_A_TIMEOUT_MS: '0' }, 'backends[0].timeoutMs'],
    [
      {
        GATEWAY_BACKENDS: 'o=openstack@http://k/v3',
        GATEWAY_BACKEND_O_USERNAME: 'u',
        GATEWAY_BACKEND_O_PROJECT_NAME: 'p',
      },
      'backends[0].auth.password',
    ],
    [{ OS_AUTH_URL: 'http://k/v3', OS_APPLICATION_CREDENTIAL_ID: 'x' }, 'backends[0].auth.secret'],
    [{ GATEWAY_BACKENDS: 'o=openstack@http://k/v3', GATEWAY_BACKEND_O_INTERFACE: 'private' }, 'backends[0].interface'],
  ])('should refuse %j naming the setting %s', (env, setting) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    try {
      loadConfig(env);
    } catch (err) {
      expect((err as ConfigError).setting).toBe(setting);
    }
  });
});

describe('command line', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('should print help and the version', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: volume-gateway');
    // Every kind, its credential header, every setting family (the definition's sections) and every variable.
    for (const m of BACKEND_MODULES)
      expect(help.stdout).toMatch(new RegExp(`^  ${m.kind} .*${m.credential.header}`, 'm'));
    for (const [key, node] of Object.entries(GATEWAY_SETTINGS))
      if (!isSetting(node)) expect(help.stdout).toMatch(new RegExp(`^  ${key} `, 'm'));
    for (const { setting } of settingLeaves(GATEWAY_SETTINGS))
      if (setting.env) expect(help.stdout).toMatch(new RegExp(`\\b${setting.env}\\b`));
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'off unless OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set',
    );
    for (const v of OTEL_VARIABLES) expect(help.stdout).toContain(v);
    const version = run(['--version']);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string }).version,
    );
  });

  it('should show the default host and port, the paths served, an example per kind that starts it, and the docs where they are', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    const configured = loadConfig({ GATEWAY_BACKENDS: 'lab=memory' });
    const demo = loadConfig({});
    expect(help.stdout).toContain(
      `Listens on HOST:PORT: ${configured.host}:${configured.port} by default, ${demo.host}:${demo.port} in demo mode.`,
    );
    // Every path the gateway serves, each at the start of its row (after the indent).
    for (const path of ['/graphql', '/graphql/schema.graphql', '/graphql/possible-types.json', '/live', '/metrics'])
      expect(help.stdout).toMatch(new RegExp(`^  ${path.replace(/\./g, '\\.')} `, 'm'));
    expect(help.stdout).toMatch(/^ {2}\/healthz, \/readyz .*HEAD/m);
    // The examples: each variable-prefixed command line, read as the gateway reads its environment.
    const kinds = [...help.stdout.matchAll(/^ {2}((?:[A-Z_0-9]+=\S+ )+)volume-gateway$/gm)].map((m) => {
      const env = Object.fromEntries(
        m[1]!
          .trim()
          .split(' ')
          .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
      );
      return loadConfig(env).backends.map((b) => b.kind);
    });
    expect(kinds).toEqual(expect.arrayContaining([['nomad'], ['openstack']]));
    // The docs by absolute path (they ship in the package), not relative to the repository.
    const docs = help.stdout.slice(help.stdout.indexOf('Documentation'));
    const named = [...docs.matchAll(/^ {2}(\/\S+?)(?::|\/?$)/gm)].map((m) => m[1]!);
    expect(named).toEqual([join(root, 'README.md'), join(root, 'docs'), join(root, 'config.schema.json')]);
    for (const p of [...named, join(root, 'docs', 'configuration.md')]) expect(existsSync(p)).toBe(true);
    expect(help.stdout).toContain('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    expect(help.stdout).toContain('off unless OTEL_METRICS_EXPORTER=otlp');
    expect(help.stdout).toContain('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
  });

  it('should exit 2 with a message naming a bad setting', () => {
    const bad = run([], { GATEWAY_BACKENDS: 'east=nomad@nope' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('backends[0].url');
    const missing = run(['--config', '/nonexistent/gw.json']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--config');
  });
});
