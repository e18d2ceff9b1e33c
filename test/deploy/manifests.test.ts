/**
 * deploy/: the Kubernetes manifests validated offline against the Kubernetes schemas
 * (kubernetes-models' validate(); `kubectl --dry-run=client` needs an API server), and the Nomad
 * JSON jobs read for what they must say. The environment each one sets is read by the gateway's
 * own config reader, and both agree with the Containerfile (port, user, health path). Kill
 * timeouts are checked against the gateway's shutdown bound (server/shutdown-timing.ts), the mTLS
 * overlay (deploy/kubernetes-tls) is rendered by kubectl's built-in kustomize, and the
 * Containerfile's HEALTHCHECK command is run against real ports.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../server/config';
import { SERVER_SETTINGS } from '../../server/config-definition';
import { DEFAULT_SHUTDOWN_DRAIN_MS } from '../../server/readiness';
import { SHUTDOWN_BACKSTOP_MS, WS_CLOSE_WAIT_MS } from '../../server/shutdown-timing';

const ROOT = join(__dirname, '..', '..');
const DEPLOY = join(ROOT, 'deploy');
const read = (...p: string[]): string => readFileSync(join(DEPLOY, ...p), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
};

/** What the Containerfile says: the port it exposes, its user, the path its HEALTHCHECK fetches, its default base. */
function containerfile(): { port: number; uid: number; healthPath: string; from: string } {
  const text = read('Containerfile');
  return {
    port: Number(/^EXPOSE (\d+)$/m.exec(text)![1]),
    uid: Number(/^USER (\d+):\d+$/m.exec(text)![1]),
    healthPath: /^HEALTHCHECK [\s\S]*?CMD \[.*?(\/\w+)'/m.exec(text)![1]!,
    from: /^ARG NODE_IMAGE=(\S+)$/m.exec(text)![1]!,
  };
}

/** The Containerfile's `HEALTHCHECK` command (exec form), as an argv. */
function healthcheckCommand(): string[] {
  return JSON.parse(/^HEALTHCHECK [\s\S]*?CMD (\[.*\])$/m.exec(read('Containerfile'))![1]!) as string[];
}

/** The gateway's own reading of an environment: throws on an unknown or invalid setting. */
function gatewayReads(env: Record<string, string>): ReturnType<typeof loadConfig> {
  return loadConfig(env);
}

/** An environment's `${NOMAD_…}` references, filled in as Nomad would. */
const interpolated = (env: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      v.replace('${NOMAD_PORT_http}', '24000').replace('${NOMAD_IP_http}', '10.0.0.5'),
    ]),
  );

/** What an orchestrator's kill timeout must leave beyond the gateway's own bound (a loaded node, the runtime's signal delivery). */
const KILL_MARGIN_MS = 5_000;

/** A millisecond setting as `env` sets it, else the config definition's default. */
const ms = (env: Record<string, string>, name: string, fallback: number): number =>
  env[name] === undefined ? fallback : Number(env[name]);

/**
 * The latest a gateway started with `env` exits after SIGTERM, from the definition's defaults and
 * what `env` sets: the drain, the sockets' close wait, the grace period, main.ts's backstop. The
 * gateway's own reading of `env` must agree on the drain and the grace period.
 */
function shutdownBound(env: Record<string, string>): number {
  const drain = ms(env, 'SHUTDOWN_DRAIN_MS', DEFAULT_SHUTDOWN_DRAIN_MS);
  const grace = ms(env, 'SHUTDOWN_GRACE_MS', SERVER_SETTINGS.shutdownGraceMs.default);
  const config = gatewayReads(env);
  expect({ drain: config.shutdownDrainMs, grace: config.shutdownGraceMs }).toEqual({ drain, grace });
  return drain + WS_CLOSE_WAIT_MS + grace + SHUTDOWN_BACKSTOP_MS;
}

/** deploy/kubernetes/redis-secret.example.yaml: the Secret REDIS_URL comes from, as an example (not in the kustomization). */
const REDIS_SECRET_EXAMPLE = 'redis-secret.example.yaml';
const exampleSecrets = (): any[] => parseAllDocuments(read('kubernetes', REDIS_SECRET_EXAMPLE)).map((d) => d.toJS());

/**
 * A container's environment as the kubelet sets it: each `value`, and each `secretKeyRef` from the
 * example Secret of that name.
 * @throws Error for a reference no example Secret answers
 */
function containerEnv(c: { env: Array<{ name: string; value?: string; valueFrom?: any }> }): Record<string, string> {
  return Object.fromEntries(
    c.env.map((e) => {
      if (e.value !== undefined) return [e.name, e.value];
      const ref = e.valueFrom?.secretKeyRef as { name: string; key: string } | undefined;
      const value = exampleSecrets().find((s) => s.metadata.name === ref?.name)?.stringData?.[ref?.key ?? ''];
      if (typeof value !== 'string')
        throw new Error(`env ${e.name}: no example value for ${JSON.stringify(e.valueFrom)}`);
      return [e.name, value];
    }),
  );
}

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/Secret': Secret,
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

describe('deploy/kubernetes', () => {
  const kustomization = parseAllDocuments(read('kubernetes', 'kustomization.yaml'))[0]!.toJS() as {
    resources: string[];
  };
  const docs = kustomization.resources.flatMap((f) => parseAllDocuments(read('kubernetes', f)).map((d) => d.toJS()));
  const byKind = (kind: string): any => docs.find((d) => d.kind === kind);

  it('should validate every manifest the kustomization lists against the Kubernetes schemas', () => {
    expect(docs.map((d) => d.kind).sort()).toEqual(['Deployment', 'NetworkPolicy', 'PodDisruptionBudget', 'Service']);
    for (const d of docs) {
      const Model = MODELS[`${d.apiVersion}/${d.kind}`];
      expect({ kind: d.kind, known: Model !== undefined }).toEqual({ kind: d.kind, known: true });
      expect(() => new Model!(d).validate()).not.toThrow();
    }
  });

  it('should catch an invalid manifest (the check can fail)', () => {
    const bad = structuredClone(byKind('Deployment'));
    bad.spec.template.spec.containers[0].resources.limits.memory = { gib: 1 };
    expect(() => new Deployment(bad).validate()).toThrow(/memory/);
  });

  it('should run the image non-root on a read-only root filesystem, with resources and the probes', () => {
    const image = containerfile();
    const pod = byKind('Deployment').spec.template.spec;
    const c = pod.containers[0];
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: image.uid });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.image).toMatch(new RegExp(`/volume-gateway:${pkg.version.replace(/\./g, '\\.')}$`));
    expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits.memory).toEqual(expect.any(String));
    expect(c.ports).toEqual([{ name: 'http', containerPort: image.port, protocol: 'TCP' }]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: image.healthPath, port: 'http' });
    expect(image.healthPath).toBe('/healthz');
    // The only writable place is a volume.
    expect(
      c.volumeMounts.map(
        (m: { name: string }) => pod.volumes.find((v: { name: string }) => v.name === m.name)?.emptyDir,
      ),
    ).not.toContain(undefined);
    const env = containerEnv(c);
    const config = gatewayReads(env);
    expect(config.port).toBe(image.port);
    expect(config.backends.length).toBeGreaterThan(0);
  });

  it('should give the gateway longer to stop than its own shutdown takes, and not delay SIGTERM with a preStop (the gateway drains itself)', () => {
    const pod = byKind('Deployment').spec.template.spec;
    const c = pod.containers[0];
    const env = containerEnv(c);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(shutdownBound(env) + KILL_MARGIN_MS);
    expect(c.lifecycle?.preStop).toBeUndefined();
    // The check can fail: a longer grace period in the env needs a longer termination grace period.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeLessThan(
      shutdownBound({ ...env, SHUTDOWN_GRACE_MS: '20000' }) + KILL_MARGIN_MS,
    );
  });

  it('should set REDIS_URL from a required Secret key, whose example holds a placeholder Redis URL the gateway reads', () => {
    const deployment = byKind('Deployment');
    const c = deployment.spec.template.spec.containers[0];
    const redis = c.env.find((e: { name: string }) => e.name === 'REDIS_URL');
    expect(redis).toEqual({
      name: 'REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'volume-gateway-redis', key: 'redis-url', optional: false } },
    });
    // Several replicas share their state through Redis: without it they must not start.
    expect(deployment.spec.replicas).toBeGreaterThan(1);
    const [secret, ...more] = exampleSecrets();
    expect(more).toEqual([]);
    expect(() => new Secret(secret).validate()).not.toThrow();
    expect(secret.metadata.name).toBe('volume-gateway-redis');
    // An example never applied over the real Secret, and never a real password.
    expect(kustomization.resources).not.toContain(REDIS_SECRET_EXAMPLE);
    const url = new URL(secret.stringData['redis-url']);
    expect(url.protocol).toMatch(/^rediss?:$/);
    expect(url.password).toBe('CHANGE-ME');
    expect(gatewayReads(containerEnv(c)).redis?.url).toBe(secret.stringData['redis-url']);
    // The check can fail: a reference to a Secret key the example does not have.
    expect(() =>
      containerEnv({
        env: [{ name: 'REDIS_URL', valueFrom: { secretKeyRef: { name: 'volume-gateway-redis', key: 'url' } } }],
      }),
    ).toThrow(/no example value/);
  });

  it("should select the Deployment's pods from the Service, the PodDisruptionBudget and the NetworkPolicy", () => {
    const labels = byKind('Deployment').spec.template.metadata.labels;
    const matches = (selector: Record<string, string>): boolean =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(matches(byKind('Deployment').spec.selector.matchLabels)).toBe(true);
    expect(matches(byKind('Service').spec.selector)).toBe(true);
    expect(byKind('Service').spec.ports[0].targetPort).toBe('http');
    expect(matches(byKind('PodDisruptionBudget').spec.selector.matchLabels)).toBe(true);
    expect(byKind('PodDisruptionBudget').spec.minAvailable).toBeLessThan(byKind('Deployment').spec.replicas);
    const policy = byKind('NetworkPolicy').spec;
    expect(matches(policy.podSelector.matchLabels)).toBe(true);
    // docs/federation.md: only the router (and Prometheus) may reach the port.
    expect(policy.policyTypes).toEqual(['Ingress']);
    expect(policy.ingress.length).toBeGreaterThan(0);
    for (const rule of policy.ingress) {
      expect(rule.from.length).toBeGreaterThan(0);
      expect(rule.ports).toEqual([{ protocol: 'TCP', port: containerfile().port }]);
    }
  });
});

describe("deploy/kubernetes-tls (mTLS on the gateway's port, probes and scrapes on MANAGEMENT_PORT)", () => {
  // kubectl's built-in kustomize renders the overlay offline (no API server needed).
  const rendered = parseAllDocuments(
    execFileSync('kubectl', ['kustomize', join(DEPLOY, 'kubernetes-tls')], { encoding: 'utf8' }),
  ).map((d) => d.toJS());
  const byKind = (kind: string): any => rendered.find((d) => d.kind === kind);

  it('should render the base with the patches, every manifest valid against the Kubernetes schemas', () => {
    expect(rendered.map((d) => d.kind).sort()).toEqual([
      'Deployment',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
    ]);
    for (const d of rendered) expect(() => new MODELS[`${d.apiVersion}/${d.kind}`]!(d).validate()).not.toThrow();
  });

  it('should serve mTLS on the main port and point every probe and the Prometheus scrape at the management port', () => {
    const pod = byKind('Deployment').spec.template;
    const c = pod.spec.containers[0];
    const config = gatewayReads(containerEnv(c));
    expect(config.tls).toEqual({
      certFile: expect.any(String),
      keyFile: expect.any(String),
      clientCaFile: expect.any(String),
    });
    // The files are in the mounted Secret.
    const mount = c.volumeMounts.find(
      (m: { name: string }) => pod.spec.volumes.find((v: any) => v.name === m.name)?.secret,
    );
    for (const f of [config.tls!.certFile, config.tls!.keyFile, config.tls!.clientCaFile!])
      expect(f.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(mount.readOnly).toBe(true);
    // The management port the gateway opens is the container port every probe names.
    const management = c.ports.find((p: { containerPort: number }) => p.containerPort === config.managementPort);
    expect(management).toMatchObject({ name: expect.any(String), protocol: 'TCP' });
    expect(management.name).not.toBe('http');
    for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe])
      expect(probe.httpGet).toMatchObject({ port: management.name, scheme: 'HTTP' });
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(pod.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(config.managementPort),
      'prometheus.io/path': '/metrics',
    });
    // Prometheus may reach the management port only; the router the TLS port.
    const rules = byKind('NetworkPolicy').spec.ingress;
    const portsOf = (name: string): number[] =>
      rules
        .filter((r: any) => r.from.some((f: any) => f.podSelector?.matchLabels?.['app.kubernetes.io/name'] === name))
        .flatMap((r: any) => r.ports.map((p: { port: number }) => p.port));
    expect(portsOf('prometheus')).toEqual([config.managementPort]);
    expect(portsOf('graphql-router')).toEqual([config.port]);
    // Shutdown timing is the base's: the patch changes no setting of it.
    expect(byKind('Deployment').spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
      shutdownBound(containerEnv(c)) + KILL_MARGIN_MS,
    );
  });
});

describe('deploy/Containerfile HEALTHCHECK', () => {
  const servers: Server[] = [];
  afterAll(async () => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));
  /** A port answering /healthz with `status`. */
  const serving = async (status: number): Promise<string> => {
    const s = createServer((req, res) => res.writeHead(req.url === '/healthz' ? status : 404).end());
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return String((s.address() as AddressInfo).port);
  };
  /** The command's exit code with `env` (no shell, as the runtime runs the exec form). */
  const exitCode = async (env: Record<string, string>): Promise<number> => {
    const [cmd, ...args] = healthcheckCommand();
    return promisify(execFile)(cmd === 'node' ? process.execPath : cmd!, args, {
      env: { PATH: process.env.PATH!, ...env },
    }).then(
      () => 0,
      (err: { code: number }) => err.code,
    );
  };

  it('should probe MANAGEMENT_PORT when it is set, else PORT', async () => {
    const up = await serving(200);
    const down = await serving(503);
    expect(await exitCode({ PORT: up })).toBe(0);
    expect(await exitCode({ PORT: down })).toBe(1);
    // PORT speaks TLS (here: answers 503 to plain HTTP); the management port is asked instead.
    expect(await exitCode({ PORT: down, MANAGEMENT_PORT: up })).toBe(0);
    expect(await exitCode({ PORT: up, MANAGEMENT_PORT: down })).toBe(1);
  });
});

describe('deploy/nomad', () => {
  const job = (file: string): any => JSON.parse(read('nomad', file)).Job;
  /** Nomad's durations are nanoseconds. */
  const MS = 1e6;

  for (const file of ['volume-gateway.docker.json', 'volume-gateway.exec.json']) {
    it(`${file}: a service with the http port, a /readyz and a /healthz check on it, and an environment the gateway reads`, () => {
      const j = job(file);
      expect(j.Type).toBe('service');
      const group = j.TaskGroups[0];
      const task = group.Tasks[0];
      expect(group.Networks[0].DynamicPorts.map((p: { Label: string }) => p.Label)).toEqual(['http']);
      const checks = group.Services[0].Checks.map((c: any) => ({ type: c.Type, path: c.Path }));
      expect(group.Services[0].PortLabel).toBe('http');
      expect(checks).toEqual([
        { type: 'http', path: '/readyz' },
        { type: 'http', path: '/healthz' },
      ]);
      expect(j.Update.HealthCheck).toBe('checks');
      expect(task.Resources).toEqual({
        CPU: expect.any(Number),
        MemoryMB: expect.any(Number),
        MemoryMaxMB: expect.any(Number),
      });
      const config = gatewayReads(interpolated(task.Env));
      expect(config.backends.length).toBeGreaterThan(0);
    });

    it(`${file}: KillTimeout above the gateway's own shutdown bound, and no ShutdownDelay doubling its drain`, () => {
      const group = job(file).TaskGroups[0];
      const task = group.Tasks[0];
      expect(task.KillSignal).toBe('SIGTERM');
      expect(task.KillTimeout / MS).toBeGreaterThanOrEqual(shutdownBound(interpolated(task.Env)) + KILL_MARGIN_MS);
      expect(group.ShutdownDelay ?? 0).toBe(0);
      expect(task.ShutdownDelay ?? 0).toBe(0);
    });
  }

  it('volume-gateway.docker.json: the image, read-only with a tmpfs, on the port the image listens on', () => {
    const image = containerfile();
    const group = job('volume-gateway.docker.json').TaskGroups[0];
    const task = group.Tasks[0];
    expect(task.Driver).toBe('docker');
    expect(task.Config.image).toMatch(new RegExp(`/volume-gateway:${pkg.version.replace(/\./g, '\\.')}$`));
    expect(task.Config.ports).toEqual(['http']);
    expect(group.Networks[0].DynamicPorts[0].To).toBe(image.port);
    expect(gatewayReads(task.Env).port).toBe(image.port);
    expect(task.Config.readonly_rootfs).toBe(true);
    expect(task.Config.mount).toEqual([expect.objectContaining({ type: 'tmpfs', target: '/tmp' })]);
  });

  it("volume-gateway.exec.json: node runs the bundle's package bin on the port and address Nomad gives", () => {
    const task = job('volume-gateway.exec.json').TaskGroups[0].Tasks[0];
    expect(task.Driver).toBe('exec');
    expect(task.Config.command).toMatch(/\/node$/);
    // scripts/bundle.ts: volume-gateway/node_modules/volume-gateway/ holds the package.
    expect(task.Config.args).toEqual([`local/volume-gateway/node_modules/volume-gateway/${pkg.bin['volume-gateway']}`]);
    expect(task.Artifacts[0].GetterSource).toMatch(
      new RegExp(`volume-gateway-${pkg.version.replace(/\./g, '\\.')}-bundle\\.tar\\.gz$`),
    );
    expect(task.Env).toMatchObject({ PORT: '${NOMAD_PORT_http}', HOST: '${NOMAD_IP_http}' });
    const config = gatewayReads(interpolated(task.Env));
    expect({ port: config.port, host: config.host }).toEqual({ port: 24000, host: '10.0.0.5' });
  });

  it('should default the image to the official Node.js LTS image', () => {
    expect(containerfile().from).toMatch(/^docker\.io\/library\/node:(22|24)-[a-z]+-slim$/);
  });
});
