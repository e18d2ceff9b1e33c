/**
 * The GraphiQL route without a browser: who gets the page, how assets are served, and that
 * everything else (curl's GETs, every POST) still reaches Apollo. Uses a small fake bundle;
 * the real one is built and exercised in graphiql.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import {
  createGraphiQLHandler,
  DEFAULT_QUERY,
  prefersHtml,
  tabsFromMarkdown,
  type GraphiQLHandlerOptions,
} from '../../server/graphiql';
import { MANIFEST_FILE, type GraphiQLManifest } from '../../server/graphiql/manifest';
import { createLogger } from '../../server/logger';
import { startFront, type Front } from './front';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

const manifest: GraphiQLManifest = {
  files: {
    script: 'graphiql-AAAA.js',
    style: 'graphiql-BBBB.css',
    editorWorker: 'editor.worker-CCCC.js',
    jsonWorker: 'json.worker-DDDD.js',
    graphqlWorker: 'graphql.worker-EEEE.js',
  },
  versions: { graphiql: '0.0.0-test' },
};
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

describe('GraphiQL route', () => {
  let work: string;
  let demo: DemoBackends;
  let gateway: RunningGateway;
  const fronts: Front[] = [];
  const frontWith = async (o: GraphiQLHandlerOptions = {}): Promise<Front> => {
    const f = await startFront(createGraphiQLHandler({ assetsDir: join(work, 'assets'), ...o }), gateway.port);
    fronts.push(f);
    return f;
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'graphiql-route-'));
    const dir = join(work, 'assets');
    mkdirSync(dir);
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify(manifest));
    for (const f of Object.values(manifest.files)) writeFileSync(join(dir, f), f.endsWith('.css') ? 'body{}' : SCRIPT);
    writeFileSync(join(dir, `${manifest.files.script}.gz`), gzipSync(SCRIPT));
    demo = await startDemoBackends();
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry: createRegistry(demo.backends),
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    for (const f of fronts) await f.close();
    await gateway.stop();
    await demo.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('should be routed by the gateway itself: a browser at /graphql gets HTML, JSON clients still get GraphQL', async () => {
    // The gateway's own handler reads dist/: the page when `npm run build` ran, else a page saying to build.
    const page = await fetch(gateway.url, { headers: { accept: BROWSER_ACCEPT } });
    expect([200, 503]).toContain(page.status);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('GraphiQL');
    const api = await fetch(`${gateway.url}?query=${encodeURIComponent('{ storageBackends { id } }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect(api.status).toBe(200);
    expect((await api.json()).data.storageBackends.length).toBeGreaterThan(0);
  });

  it('should give a browser the page, with the README operations as tabs and a strict CSP', async () => {
    const front = await frontWith();
    const res = await fetch(`${front.origin}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toMatch(
      /default-src 'none'.*script-src 'self'.*connect-src 'self'/,
    );
    const html = await res.text();
    expect(html).toContain('<script defer src="/graphiql/assets/graphiql-AAAA.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/graphiql/assets/graphiql-BBBB.css">');
    expect(html).not.toMatch(/https?:\/\//); // nothing to fetch from elsewhere
    const config = JSON.parse(/<script id="graphiql-config" type="application\/json">(.*?)<\/script>/.exec(html)![1]!);
    expect(config.endpointPath).toBe('/graphql');
    expect(config.workers).toEqual({
      editor: '/graphiql/assets/editor.worker-CCCC.js',
      json: '/graphiql/assets/json.worker-DDDD.js',
      graphql: '/graphiql/assets/graphql.worker-EEEE.js',
    });
    // Every ```graphql block of the README, each with an operation name to title its tab.
    const blocks = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8').match(/```graphql\n/g) ?? [];
    expect(config.tabs).toHaveLength(blocks.length);
    expect(
      config.tabs.map((t: { query: string }) => /^(query|mutation|subscription) (\w+)/.exec(t.query)?.[2]),
    ).toEqual(expect.arrayContaining(['Volumes', 'CreateVolume']));
    expect(config.tabs.every((t: { query: string }) => /^(query|mutation|subscription) \w+/.test(t.query))).toBe(true);
    expect(config.tabs[0].headers).toContain('X-Nomad-Token');
    expect(config.defaultHeaders).toMatch(/\/\/ "X-Nomad-Token": "<secret>"/);
  });

  it("should open new tabs with a default query that the gateway's schema answers", async () => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: DEFAULT_QUERY }),
    });
    const body = await res.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.storageBackends.map((b: { id: string }) => b.id)).toEqual(demo.backends.map((b) => b.id));
  });

  it('should leave curl, JSON clients and every POST to Apollo', async () => {
    const front = await frontWith();
    for (const accept of ['*/*', 'application/json', 'application/graphql-response+json, text/html']) {
      // The preflight header passes Apollo's CSRF check for GETs (the gateway's rule, not ours).
      const res = await fetch(`${front.origin}/graphql?query=${encodeURIComponent('{ storageBackends { id } }')}`, {
        headers: { accept, 'apollo-require-preflight': 'true' },
      });
      expect({ accept, type: res.headers.get('content-type') }).toEqual({
        accept,
        type: expect.stringContaining('json'),
      });
      expect((await res.json()).data.storageBackends).toHaveLength(demo.backends.length);
    }
    const post = await fetch(`${front.origin}/graphql`, {
      method: 'POST',
      headers: { accept: BROWSER_ACCEPT, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ storageBackends { id } }' }),
    });
    expect((await post.json()).data.storageBackends).toHaveLength(demo.backends.length);
  });

  it('should serve assets from memory with types, immutable caching and gzip', async () => {
    const front = await frontWith();
    const url = `${front.origin}/graphiql/assets/${manifest.files.script}`;
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(SCRIPT);
    // fetch decompresses; the smaller length on the wire shows the gzip twin was sent.
    const gz = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(Number(gz.headers.get('content-length'))).toBeLessThan(SCRIPT.length / 10);
    expect(await gz.text()).toBe(SCRIPT);
    const css = await fetch(`${front.origin}/graphiql/assets/${manifest.files.style}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const path of ['manifest.json', `${manifest.files.script}.gz`, 'nope.js', '..%2F..%2Fpackage.json']) {
      expect({ path, status: (await fetch(`${front.origin}/graphiql/assets/${path}`)).status }).toEqual({
        path,
        status: 404,
      });
    }
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });

  it('should tell a browser how to build it when the bundle is missing, and keep the API up', async () => {
    const front = await frontWith({ assetsDir: join(work, 'nothing-here') });
    const res = await fetch(`${front.origin}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
    const api = await fetch(`${front.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ storageBackends { id } }' }),
    });
    expect((await api.json()).data.storageBackends).toHaveLength(demo.backends.length);
  });

  it('should keep tab text from closing the config script element', async () => {
    const front = await frontWith({ tabs: [{ query: '</script><script>alert(1)</script>' }], title: '<b>t</b>' });
    const html = await (await fetch(`${front.origin}/graphql`, { headers: { accept: BROWSER_ACCEPT } })).text();
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('<title>&#60;b&#62;t&#60;/b&#62;</title>');
    const config = JSON.parse(/<script id="graphiql-config" type="application\/json">(.*?)<\/script>/.exec(html)![1]!);
    expect(config.tabs[0].query).toBe('</script><script>alert(1)</script>');
  });
});

describe('prefersHtml', () => {
  it.each([
    [BROWSER_ACCEPT, true],
    ['text/html', true],
    ['application/json;q=0.5, text/html', true],
    ['*/*', false],
    ['', false],
    [undefined, false],
    ['application/json', false],
    ['text/html, application/json', false], // a tie goes to the API
    ['text/html;q=0', false],
  ])('%j → %j', (accept, expected) => expect(prefersHtml(accept)).toBe(expected));
});

describe('tabsFromMarkdown', () => {
  it('should name anonymous operations after their root fields and sketch their variables', () => {
    const md = [
      '```graphql\n{ volumes(first: 2) { nodes { id } } }\n```',
      '```graphql\n{ volumes(first: 2, filter: {}) { nodes { id } } }\n```',
      '```graphql\nmutation ($id: ID!) { deleteVolume(input: { volumeId: $id }) { deletedId } }\n```',
      '```graphql\nquery Named { storageBackends { id } }\n```',
      '```sh\ncurl\n```',
    ].join('\n\n');
    const tabs = tabsFromMarkdown(md, '{}');
    expect(tabs.map((t) => t.query)).toEqual([
      'query Volumes { volumes(first: 2) { nodes { id } } }',
      'query VolumesByFilter { volumes(first: 2, filter: {}) { nodes { id } } }',
      'mutation DeleteVolume($id: ID!) { deleteVolume(input: { volumeId: $id }) { deletedId } }',
      'query Named { storageBackends { id } }',
    ]);
    expect(tabs[2]!.variables).toMatch(/^\{\n {2}"id": null \/\/ ID!/);
    expect(tabs.every((t) => t.headers === '{}')).toBe(true);
  });
});
