/**
 * A stalled log reader: the gateway's stdout is not read for a while. Log lines wait in memory only
 * up to LOG_MAX_BUFFER_BYTES; beyond, they are dropped and counted, requests are still answered,
 * and writing resumes by itself once the reader reads again. A SIGTERM while the reader is still
 * stalled ends the process within the documented shutdown bound, the lines stdout never took
 * dropped and counted in one line on stderr (issue 27, item 5; docs/reliability.md R18).
 */
import { startGatewayProcess } from '../support/gateway-process';
import { askTypename, droppedLines as dropped, stallUntilDropped } from '../support/log-stall';
import { until } from '../support/until';
import { shutdownBoundMs } from '../../server/shutdown-timing';

/** Demo mode: no drain period. A short grace keeps the bound short. */
const SETTINGS = { shutdownDrainMs: 0, shutdownGraceMs: 1_000 };

describe('log buffer bound', () => {
  const g = startGatewayProcess({
    LOG_MAX_BUFFER_BYTES: '65536',
    // JSON lines (demo mode writes pretty ones unless told; test/server/log-format.test.ts stalls those).
    LOG_FORMAT: 'json',
    DEMO_ACTIVITY: '0',
    RATE_LIMIT_CALLER_RPS: '0',
    RATE_LIMIT_ADDRESS_RPS: '0',
    SHUTDOWN_GRACE_MS: String(SETTINGS.shutdownGraceMs),
  });
  let url: string;
  let base: string;

  beforeAll(async () => {
    url = await g.serving();
    base = url.replace(/\/graphql$/, '');
  }, 90_000);
  afterAll(async () => {
    // Whatever a failed test left: the reader reads, and a gateway still running is stopped.
    g.child.stdout.resume();
    const killer = setTimeout(() => g.child.kill('SIGKILL'), 30_000);
    await g.stop();
    clearTimeout(killer);
  }, 60_000);

  it('should drop and count log lines while stdout is not read, keep answering, and write again once it is', async () => {
    expect(await dropped(base)).toBe(0);
    // The reader stalls: no more reads from the gateway's stdout, so the socket's buffers fill.
    g.child.stdout.pause();
    await stallUntilDropped(url, 'DuringTheStall', 0);
    expect(await dropped(base)).toBeGreaterThan(0);
    await askTypename(url, 'StillServing');
    // The reader reads again: what was held is written, then new lines as usual (a line logged
    // while the held bytes are still over the bound is dropped too, so ask until one is written).
    g.child.stdout.resume();
    await until(() => g.output().includes('"operation":"DuringTheStall"'), 'the held lines to be written', 30_000);
    await until(
      async () => (await askTypename(url, 'AfterTheStall'), g.output().includes('"operation":"AfterTheStall"')),
      'a line logged after the stall to be written',
      30_000,
      200,
    );
  }, 120_000);

  it('should exit within the shutdown bound on SIGTERM while stdout is still not read, saying on stderr how many lines were dropped', async () => {
    g.child.stdout.pause();
    await stallUntilDropped(url, 'BeforeTheEnd', await dropped(base));
    const signalled = Date.now();
    g.child.kill('SIGTERM');
    // Never read again before the exit: only the bound may end the wait (main held it until the reader read).
    const bound = shutdownBoundMs(SETTINGS);
    const code = await Promise.race([
      g.exited.then(([c]) => c as number | null),
      new Promise<string>((r) => setTimeout(() => r(`still running ${bound} ms after SIGTERM`), bound).unref()),
    ]);
    const tookMs = Date.now() - signalled;
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(bound);
    g.child.stdout.resume();
    await g.closed;
    const notices = g
      .errors()
      .split('\n')
      .filter((l) => l.includes('log lines were dropped'));
    expect(notices).toHaveLength(1);
    const [, all, running, atExit] =
      /^volume-gateway: (\d+) log lines were dropped because stdout did not take them \((\d+) while running, counted in gateway_log_lines_dropped_total; (\d+) at exit\)$/.exec(
        notices[0]!,
      ) ?? [];
    expect(Number(all)).toBe(Number(running) + Number(atExit));
    expect(Number(running)).toBeGreaterThan(0);
    expect(Number(atExit)).toBeGreaterThan(0);
  }, 120_000);
});

describe('a log reader that went away', () => {
  it('should keep serving after stdout is closed by its reader (EPIPE), and exit at once on SIGTERM', async () => {
    const g = startGatewayProcess({ DEMO_ACTIVITY: '0', SHUTDOWN_GRACE_MS: String(SETTINGS.shutdownGraceMs) });
    try {
      const url = await g.serving();
      // The reader closes its end: every later write to stdout fails with EPIPE.
      g.child.stdout.destroy();
      for (let i = 0; i < 20; i++) {
        const r = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `query AfterTheReader${i} { __typename }` }),
        });
        expect(await r.json()).toEqual({ data: { __typename: 'Query' } });
      }
      const signalled = Date.now();
      g.child.kill('SIGTERM');
      const bound = shutdownBoundMs(SETTINGS);
      const code = await Promise.race([
        g.exited.then(([c]) => c as number | null),
        new Promise<string>((r) => setTimeout(() => r(`still running ${bound} ms after SIGTERM`), bound).unref()),
      ]);
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(bound);
      await g.closed;
      expect(g.errors()).toMatch(/^volume-gateway: \d+ log lines were dropped because stdout did not take them/m);
    } finally {
      if (g.child.exitCode === null) g.child.kill('SIGKILL');
    }
  }, 120_000);
});
