/**
 * A stalled log reader: the gateway's stdout is not read for a while. Log lines wait in memory only
 * up to LOG_MAX_BUFFER_BYTES; beyond, they are dropped and counted, requests are still answered,
 * and writing resumes by itself once the reader reads again.
 */
import { startGatewayProcess } from '../support/gateway-process';
import { until } from '../support/until';

const dropped = async (base: string): Promise<number> => {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^gateway_log_lines_dropped_total (\S+)/m.exec(text)?.[1] ?? 'NaN');
};

describe('log buffer bound', () => {
  it('should drop and count log lines while stdout is not read, keep answering, and write again once it is', async () => {
    const g = startGatewayProcess({ LOG_MAX_BUFFER_BYTES: '65536', DEMO_ACTIVITY: '0', RATE_LIMIT_CALLER_RPS: '0', RATE_LIMIT_ADDRESS_RPS: '0' });
    try {
      const url = await g.serving();
      const base = url.replace(/\/graphql$/, '');
      expect(await dropped(base)).toBe(0);
      // The reader stalls: no more reads from the gateway's stdout, so the socket's buffers fill.
      g.child.stdout.pause();
      const ask = async (name: string): Promise<unknown> => (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `query ${name} { __typename }` }) })).json());
      // Each request logs a line of about 200 bytes: the 64 KiB bound plus the socket's buffers fill
      // within a few thousand; 20,000 is the give-up point.
      let sent = 0;
      while ((await dropped(base)) === 0 && sent < 20_000) {
        const answers = await Promise.all(Array.from({ length: 100 }, () => ask('DuringTheStall')));
        sent += answers.length;
        for (const a of answers) expect(a).toEqual({ data: { __typename: 'Query' } });
      }
      expect(await dropped(base)).toBeGreaterThan(0);
      expect(await ask('StillServing')).toEqual({ data: { __typename: 'Query' } });
      // The reader reads again: what was held is written, then new lines as usual (a line logged
      // while the held bytes are still over the bound is dropped too, so ask until one is written).
      g.child.stdout.resume();
      await until(() => g.output().includes('"operation":"DuringTheStall"'), 'the held lines to be written', 30_000);
      await until(async () => (await ask('AfterTheStall'), g.output().includes('"operation":"AfterTheStall"')), 'a line logged after the stall to be written', 30_000, 200);
    } finally {
      await g.stop();
    }
  }, 120_000);
});
