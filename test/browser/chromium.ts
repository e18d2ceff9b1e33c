/**
 * Headless Chromium for the live page and GraphiQL subscription tests, set up as graphiql.test.ts
 * sets it up: Debian's /usr/bin/chromium through playwright-core, every host name but the
 * loopback address unresolvable (air gap), and every request and console error recorded.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL requested (pages, assets, workers, sockets), in order. */
  requested: string[];
  /** Page errors and console errors. */
  problems: string[];
  /** Requested URLs that left loopback (data: URLs excepted). */
  offLoopback(): string[];
}

export async function launch(profileDir: string): Promise<Browser> {
  // `npm test` installs Debian's chromium first (scripts/system-deps.sh); without it this fails.
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (npm test does this as root)`);
  const context = await chromium.launchPersistentContext(join(profileDir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const requested: string[] = [];
  const problems: string[] = [];
  context.on('request', (r) => requested.push(r.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(10_000);
  page.on('websocket', (ws) => requested.push(ws.url()));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return {
    context,
    page,
    requested,
    problems,
    offLoopback: () => requested.filter((u) => !u.startsWith('data:') && !LOOPBACK.has(new URL(u).hostname)),
  };
}
