/**
 * Issue 31, item 2: the demo (the gateway's CLI with no configuration) used from a browser app on
 * another loopback origin, as a local dev server serves one. Its preflights get a CORS answer (not
 * GraphQL's CSRF refusal), with the headers browser apps send allowed, and a real headless Chromium
 * (Debian's, through playwright-core) reads the answers of a POST carrying those headers and of a
 * simple GET (urql's default) without any: anonymous callers may read Nomad.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from '../support/gateway-process';
import { BROWSER_HEADER_VALUES, BROWSER_HEADERS, preflight, preflightAnswer } from '../support/cors';
import { launch, type Browser } from './chromium';

const QUERY = '{ volumes(first: 2, filter: { backends: ["nomad-east"] }) { nodes { backend { id } } } }';
/** Anonymous callers may read the demo's Nomad clusters. */
const NOMAD = { data: { volumes: { nodes: [{ backend: { id: 'nomad-east' } }, { backend: { id: 'nomad-east' } }] } } };

let gateway: ReturnType<typeof startGatewayProcess>;
let url: string;
/** A blank page on another loopback port: another origin, as a dev server's. */
let app: Server;
let appOrigin: string;
let work: string;
let b: Browser;

beforeAll(async () => {
  gateway = startGatewayProcess({ DEMO_ACTIVITY: '0' });
  url = await gateway.serving();
  app = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'),
  );
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  work = mkdtempSync(join(tmpdir(), 'cors-test-'));
  b = await launch(work);
}, 60_000);

afterAll(async () => {
  await b?.context.close();
  await new Promise((resolve) => app?.close(resolve));
  await gateway?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

it("should answer a loopback page's preflight in demo mode with CORS, allowing the headers browser apps send", async () => {
  const asked = [...BROWSER_HEADERS, 'content-type', 'x-nomad-token', 'x-auth-token'];
  for (const origin of [appOrigin, 'http://localhost:5173', 'http://[::1]:3000']) {
    const p = await preflightAnswer(url, origin, asked);
    expect(p).toMatchObject({ origin, status: 204, allowOrigin: origin });
    expect(p.text).not.toMatch(/CSRF/);
    expect(p.allowed).toEqual(expect.arrayContaining(asked));
  }
  // Only this machine's pages: another site gets the origin refusal.
  const foreign = await preflight(url, 'https://evil.example.net', asked);
  expect(foreign.status).toBe(403);
  expect((await foreign.json()).errors[0].extensions.code).toBe('ORIGIN_NOT_ALLOWED');
});

it('should let a page on another loopback origin read the demo from a real browser, with those headers and with none', async () => {
  await b.page.goto(`${appOrigin}/`);
  const results = await b.page.evaluate(
    async ({ url, query, headers }) => {
      const read = async (r: Promise<Response>) => {
        try {
          const res = await r;
          return { status: res.status, body: await res.json() };
        } catch (err) {
          return { failed: String(err) };
        }
      };
      const headed = read(
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query }),
        }),
      );
      // urql's default for a query: a GET with only `accept`, which browsers send without a preflight.
      const simple = read(
        fetch(`${url}?query=${encodeURIComponent(query)}`, {
          headers: { accept: 'application/graphql-response+json, application/json' },
        }),
      );
      return { headed: await headed, simple: await simple };
    },
    { url, query: QUERY, headers: BROWSER_HEADER_VALUES },
  );
  expect(results).toEqual({ headed: { status: 200, body: NOMAD }, simple: { status: 200, body: NOMAD } });
  expect(b.problems).toEqual([]);
});
