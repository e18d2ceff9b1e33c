/**
 * GraphiQL's subscriptions against the gateway itself (issue 11 item 8): in headless Chromium,
 * the bundled GraphiQL runs a `volumeChanged` subscription over graphql-ws on the same URL with
 * the demo's pre-filled headers, gets SUBSCRIBED, then a change made by the demo activity. (The
 * page's client against a stand-in server is covered by graphiql.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGraphiQL } from '../../scripts/build-graphiql';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import { createLogger } from '../../server/logger';
import { launch, type Browser } from './chromium';

describe('GraphiQL subscriptions against the gateway', () => {
  let work: string;
  let demo: DemoBackends;
  let gateway: RunningGateway;
  let b: Browser;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'graphiql-sub-test-'));
    await buildGraphiQL({ outDir: join(work, 'assets') });
    // Activity every 500 ms: a claim on nomad-east's build-cache comes within a couple of seconds.
    demo = await startDemoBackends({ activity: { intervalMs: 500 } });
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry: createRegistry(demo.backends),
      logger: createLogger('silent'),
      graphiql: { assetsDir: join(work, 'assets'), defaultHeaders: demo.graphiqlHeaders },
    });
    b = await launch(work);
  }, 90_000);

  afterAll(async () => {
    await b?.context.close();
    await gateway?.stop();
    await demo?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  it('should run a volumeChanged subscription and show SUBSCRIBED, then a live CLAIMED event', async () => {
    const { page } = b;
    await page.goto(gateway.url);
    await page.locator('.graphiql-container .graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
    await page.locator('.graphiql-tab-add').click();
    const text =
      'subscription Watch { volumeChanged(filter: { backends: ["nomad-east"], types: [CLAIMED] }) { type cursor volume { id nativeId status } omittedBackends { backend { id } reason } } }';
    await page.locator('.graphiql-query-editor .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(text);
    await page.keyboard.press('Shift+Control+End');
    await page.keyboard.press('Delete');
    // GraphiQL re-parses 100 ms after a change; until then it would route the old document over HTTP.
    await page.waitForFunction(
      (t) => ((globalThis as any).localStorage.getItem('graphiql:query') ?? '').includes(t),
      'subscription Watch',
    );
    const socket = page.waitForEvent('websocket');
    await page.locator('.graphiql-execute-button').click();
    const ws = await socket;
    expect(ws.url()).toBe(`ws://127.0.0.1:${gateway.port}/graphql`);
    // GraphiQL shows the latest event; the activity's next claim replaces SUBSCRIBED.
    await page.locator('.graphiql-response', { hasText: 'CLAIMED' }).waitFor({ timeout: 20_000 });
    const pane = (await page.locator('.graphiql-response .view-lines').first().innerText()).replace(/\s+/g, '');
    expect(pane).toContain('"nativeId":"build-cache"');
    expect(pane).toContain('"status":"IN_USE"');
    // The headers editor's demo tokens went in connection_init, not in the URL.
    expect(ws.url()).not.toContain('token');
    expect(b.offLoopback()).toEqual([]);
    expect(b.problems).toEqual([]);
  }, 60_000);
});
