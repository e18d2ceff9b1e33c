/**
 * The artifact: `npm pack` of the repo, installed with `npm install --omit=dev --offline` into an
 * empty folder, runs `volume-gateway` with nothing to build, against a configured backend and in
 * demo mode. One pack and one install for the file (the pack builds when sources changed).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startNomad } from '../support/harness';
import { until } from '../support/until';
import {
  installTarball,
  packRepo,
  startInstalled,
  tarballFiles,
  type GatewayProcess,
  type Installed,
} from '../support/packed';

const ROOT = join(__dirname, '..', '..');
const VOLUMES = '{ volumes(first: 100) { nodes { id nativeId backend { id } } } }';

/** The `.graphql` files under the repo's schema/ (backend folders and generated/ too), relative to the root. */
function sdlFiles(root: string, dir = 'schema'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sdlFiles(root, `${dir}/${e.name}`) : e.name.endsWith('.graphql') ? [`${dir}/${e.name}`] : [],
  );
}

async function gql(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: await res.json() };
}

/** An asset a page names (`src="/…"` or `href="/…"` ending in `suffix`), fetched from the gateway. */
async function assetOf(origin: string, html: string, suffix: string): Promise<Response> {
  const path = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!).find((p) => p.endsWith(suffix));
  if (!path) throw new Error(`the page names no ${suffix} asset:\n${html.slice(0, 2000)}`);
  return fetch(`${origin}${path}`);
}

describe('the packed package, installed with --omit=dev', () => {
  let work: string;
  let tgz: string;
  let installed: Installed;
  const running: GatewayProcess[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'vg-pack-'));
    tgz = await packRepo(join(work, 'pack'));
    installed = await installTarball(tgz, join(work, 'app'));
  }, 300_000);

  afterAll(async () => {
    await Promise.all(running.map((g) => g.stop()));
    await disposeAll();
    rmSync(work, { recursive: true, force: true });
  });

  it('should hold the compiled code, its assets and the SDL, and no tests, benchmarks or sources', () => {
    const files = tarballFiles(tgz);
    const want = [
      'package.json',
      'README.md',
      'config.schema.json',
      'npm-shrinkwrap.json',
      'dist/server/main.js',
      'dist/server/graphiql/assets/manifest.json',
      'dist/server/live/assets/manifest.json',
      'dist/simulators/nomad/demo-backend.js',
      'schema/volume.graphql',
      'schema/generated/published.graphql',
      // The API schema for client tools (docs/clients.md).
      'schema/generated/api.graphql',
    ];
    expect(want.filter((f) => !files.includes(f))).toEqual([]);
    // Every SDL file the gateway reads at run time, the backends' folders included.
    expect(sdlFiles(ROOT).filter((f) => !files.includes(f))).toEqual([]);
    // A backend's contract fixture (adapters/<kind>/testing/) is test code: it imports the test harness.
    const unwanted = files.filter(
      (f) =>
        /^(test|bench|scripts|adapters|server|domain|resolvers|subscriptions|simulators)\//.test(f) ||
        f.includes('/testing/') ||
        f.endsWith('.ts') ||
        f.endsWith('.map') ||
        f.includes('.build-stamp'),
    );
    expect(unwanted).toEqual([]);
  });

  it('should install only production dependencies, with a linked volume-gateway command', () => {
    expect(existsSync(join(installed.dir, 'node_modules', '.bin', 'volume-gateway'))).toBe(true);
    const devOnly = ['typescript', 'tsx', 'esbuild', 'jest', 'graphiql', 'react', 'monaco-editor', 'kubernetes-models'];
    expect(
      devOnly.filter(
        (p) =>
          existsSync(join(installed.dir, 'node_modules', p)) ||
          existsSync(join(installed.packageDir, 'node_modules', p)),
      ),
    ).toEqual([]);
    expect(installed.npmOutput).not.toMatch(/npm error/);
  });

  it("should name in --help the installed package's own docs, by a path that exists", async () => {
    const bin = join(installed.dir, 'node_modules', '.bin', 'volume-gateway');
    const { stdout: help } = await promisify(execFile)(bin, ['--help'], {
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    const docs = join(realpathSync(installed.packageDir), 'docs');
    expect(help).toContain(`  ${docs}/`);
    expect(existsSync(join(docs, 'configuration.md'))).toBe(true);
    expect(existsSync(join(docs, 'clients.md'))).toBe(true);
    expect(help).toContain(join(realpathSync(installed.packageDir), 'README.md'));
  });

  it('should serve a configured backend (memory, and a Nomad simulator over HTTP) under NODE_ENV=production', async () => {
    const sim: NomadSimulator = await startNomad();
    const ids = seedVolumes(sim, 3);
    const gw = await startInstalled(installed, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: `lab=memory,east=nomad@${sim.url}`,
    });
    running.push(gw);
    const origin = new URL(gw.url).origin;
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    const { status, body } = await gql(gw.url, VOLUMES, { 'x-nomad-token': MGMT, 'x-memory-token': 'lab-admin' });
    expect({ status, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    const nodes = body.data.volumes.nodes as Array<{ nativeId: string; backend: { id: string } }>;
    expect(
      nodes
        .filter((n) => n.backend.id === 'east')
        .map((n) => n.nativeId)
        .sort(),
    ).toEqual(ids);
    expect(nodes.filter((n) => n.backend.id === 'lab').length).toBeGreaterThan(0);
    // The API schema, served although production turns introspection off: the shipped file's text.
    const sdl = await fetch(`${origin}/graphql/schema.graphql`);
    expect(sdl.status).toBe(200);
    expect(await sdl.text()).toBe(readFileSync(join(installed.packageDir, 'schema/generated/api.graphql'), 'utf8'));
    // The gateway read the simulator over HTTP.
    expect(sim.requests().some((r) => r.path === '/v1/volumes')).toBe(true);
    expect(await gw.stop()).toBe(0);
  }, 90_000);

  it('should run the demo with no configuration: embedded simulators, GraphiQL and /live with their assets', async () => {
    const gw = await startInstalled(installed, { DEMO_ACTIVITY: '0', LOG_LEVEL: 'warn' });
    running.push(gw);
    const origin = new URL(gw.url).origin;
    // The banner's credential lines (`  nomad-east: X-Nomad-Token-nomad-east: demo-east-management …`), one per demo backend.
    const credentials = (): Array<[string, string]> =>
      [...gw.output().matchAll(/^\s+\S+: (X-[\w-]+): (\S+)/gm)].map((m) => [m[1]!.toLowerCase(), m[2]!]);
    await until(
      () => credentials().length >= 3,
      () => `the demo banner's credentials:\n${gw.output()}`,
    );
    expect(gw.output()).toMatch(/Demo mode/);
    const headers = Object.fromEntries(credentials());
    const { status, body } = await gql(gw.url, VOLUMES, headers);
    expect({ status, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    const backends = new Set((body.data.volumes.nodes as Array<{ backend: { id: string } }>).map((n) => n.backend.id));
    expect(backends.size).toBeGreaterThanOrEqual(3);

    const ide = await fetch(gw.url, { headers: { accept: 'text/html' } });
    expect(ide.status).toBe(200);
    const ideHtml = await ide.text();
    expect((await assetOf(origin, ideHtml, '.js')).status).toBe(200);
    expect((await assetOf(origin, ideHtml, '.css')).status).toBe(200);
    // The README's examples as tabs: the README is in the package.
    expect(ideHtml).toMatch(/volumeByNativeId/);

    const live = await fetch(`${origin}/live`);
    expect(live.status).toBe(200);
    const liveHtml = await live.text();
    expect((await assetOf(origin, liveHtml, '.js')).status).toBe(200);
    expect(await gw.stop()).toBe(0);
  }, 90_000);
});
