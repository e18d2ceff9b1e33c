/**
 * deploy/: the Kubernetes manifests validated offline against the Kubernetes schemas
 * (kubernetes-models' validate(); `kubectl --dry-run=client` needs an API server), and the Nomad
 * JSON jobs read for what they must say. The environment each one sets is read by the gateway's
 * own config reader, and both agree with the Containerfile (port, user, health path).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { parseAllDocuments } from 'yaml';
import { WS_CLOSE_WAIT_MS } from '../../server/app';
import { loadConfig } from '../../server/config';

const ROOT = join(__dirname, '..', '..');
const DEPLOY = join(ROOT, 'deploy');
const read = (...p: string[]): string => readFileSync(join(DEPLOY, ...p), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };

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

/** The gateway's own reading of an environment: throws on an unknown or invalid setting. */
function gatewayReads(env: Record<string, string>): ReturnType<typeof loadConfig> {
  return loadConfig(env);
}

/** An environment's `${NOMAD_…}` references, filled in as Nomad would. */
const interpolated = (env: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace('${NOMAD_PORT_http}', '24000').replace('${NOMAD_IP_http}', '10.0.0.5')]));

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

describe('deploy/kubernetes', () => {
  const kustomization = parseAllDocuments(read('kubernetes', 'kustomization.yaml'))[0]!.toJS() as { resources: string[] };
  const docs = kustomization.resources.flatMap((f) => parseAllDocuments(read('kubernetes', f)).map((d) => d.toJS() as any));
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
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(c.image).toMatch(new RegExp(`/volume-gateway:${pkg.version.replace(/\./g, '\\.')}$`));
    expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits.memory).toEqual(expect.any(String));
    expect(c.ports).toEqual([{ name: 'http', containerPort: image.port, protocol: 'TCP' }]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: image.healthPath, port: 'http' });
    expect(image.healthPath).toBe('/healthz');
    // The only writable place is a volume.
    expect(c.volumeMounts.map((m: { name: string }) => pod.volumes.find((v: { name: string }) => v.name === m.name)?.emptyDir)).not.toContain(undefined);
    // Kubernetes waits longer than the gateway's own shutdown (grace period, then the WebSocket close wait).
    const config = gatewayReads(Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value])));
    expect(config.port).toBe(image.port);
    expect(config.backends.length).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdownGraceMs + WS_CLOSE_WAIT_MS);
  });

  it('should select the Deployment\'s pods from the Service, the PodDisruptionBudget and the NetworkPolicy', () => {
    const labels = byKind('Deployment').spec.template.metadata.labels;
    const matches = (selector: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);
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

describe('deploy/nomad', () => {
  const job = (file: string): any => JSON.parse(read('nomad', file)).Job;
  const SECOND = 1e9;

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
      expect(task.Resources).toEqual({ CPU: expect.any(Number), MemoryMB: expect.any(Number), MemoryMaxMB: expect.any(Number) });
      const config = gatewayReads(interpolated(task.Env));
      expect(config.backends.length).toBeGreaterThan(0);
      expect(task.KillTimeout).toBeGreaterThan((config.shutdownGraceMs + WS_CLOSE_WAIT_MS) * 1e6);
      expect(group.ShutdownDelay).toBeGreaterThanOrEqual(1 * SECOND);
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

  it('volume-gateway.exec.json: node runs the bundle\'s package bin on the port and address Nomad gives', () => {
    const task = job('volume-gateway.exec.json').TaskGroups[0].Tasks[0];
    expect(task.Driver).toBe('exec');
    expect(task.Config.command).toMatch(/\/node$/);
    // scripts/bundle.ts: volume-gateway/node_modules/volume-gateway/ holds the package.
    expect(task.Config.args).toEqual([`local/volume-gateway/node_modules/volume-gateway/${pkg.bin['volume-gateway']}`]);
    expect(task.Artifacts[0].GetterSource).toMatch(new RegExp(`volume-gateway-${pkg.version.replace(/\./g, '\\.')}-bundle\\.tar\\.gz$`));
    expect(task.Env).toMatchObject({ PORT: '${NOMAD_PORT_http}', HOST: '${NOMAD_IP_http}' });
    const config = gatewayReads(interpolated(task.Env));
    expect({ port: config.port, host: config.host }).toEqual({ port: 24000, host: '10.0.0.5' });
  });

  it('should default the image to the official Node.js LTS image', () => {
    expect(containerfile().from).toMatch(/^docker\.io\/library\/node:(22|24)-[a-z]+-slim$/);
  });
});
