/**
 * Issue 19 item 7, the gateway process as operators run it (server/main.ts as a child process, demo
 * backends): standard process metric names, one message field per log line, and SIGTERM's drain
 * period (readiness 503 first while requests are still served, then the graceful stop).
 */
import { startGatewayProcess } from '../support/gateway-process';
import { settle } from '../support/until';

const DRAIN_MS = 4_000;

it('should serve standard metric names, log one message field, and drain on SIGTERM before it stops', async () => {
  const { child, output, exited, waitFor } = startGatewayProcess({
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    LOG_FORMAT: 'json',
  });
  try {
    await waitFor(/gateway started/);
    const url = /ready at (\S+)/.exec(output())![1]!;
    const origin = new URL(url).origin;
    const query = () =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ storageBackends { id } }' }),
      });
    expect((await query()).status).toBe(200);

    // prom-client's defaults under their usual names (stock Node.js dashboards); the gateway's own keep `gateway_`.
    const metrics = await (await fetch(`${origin}/metrics`)).text();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'gateway_graphql_operations_total',
    ])
      expect(metrics).toMatch(new RegExp(`^${name}[ {]`, 'm'));
    expect(metrics).not.toMatch(/^gateway_(process|nodejs)_/m);

    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, draining: false });

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    // Draining: not ready, but still serving queries.
    const draining = await settle(
      () =>
        fetch(`${origin}/readyz`).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { draining: boolean },
        })),
      (r) => r.status === 503,
    );
    expect(draining).toMatchObject({ status: 503, body: { ready: false, draining: true } });
    const during = await query();
    expect(during.status).toBe(200);
    expect(await during.json()).toEqual({
      data: { storageBackends: expect.arrayContaining([expect.objectContaining({ id: expect.any(String) })]) },
    });
    expect(Date.now() - signalledAt).toBeLessThan(DRAIN_MS);

    const [code] = await exited;
    expect(code).toBe(0);
    // It stopped after the drain period, not at once (generous upper bound: the machine is loaded).
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(Date.now() - signalledAt).toBeLessThan(DRAIN_MS + 20_000);

    // Every JSON log line has pino's `msg` and never a second `message` field.
    const lines = output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['draining: readiness answers 503', 'shutting down', 'watcher state']),
    );
    expect(lines.filter((l) => 'message' in l)).toEqual([]);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}, 60_000);
