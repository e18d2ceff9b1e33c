/** Shutdown (1012 before the HTTP drain), keep-alive, and what /metrics reports about sockets. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ackedClient, rawClient, sample, startWsGateway, stopAll, subscribed, upgradeStatus, waitFor } from './helpers';

afterEach(stopAll);

describe('socket lifecycle', () => {
  it('should close every socket with 1012 on stop(), close its streams and the hub, then stop', async () => {
    const gw = await startWsGateway();
    const a = await ackedClient(gw.wsUrl);
    const b = await rawClient(gw.wsUrl);
    await subscribed(a, 's');
    expect(await gw.open()).toBe(1);
    const stopping = gw.gateway.stop();
    const [ca, cb] = await Promise.all([a.closed, b.closed]);
    expect(ca).toEqual({ code: 1012, reason: 'Service restart: reconnect and resume from your last cursor' });
    expect(cb.code).toBe(1012);
    await stopping;
    // Read in process: the hub's streams are all closed and its watcher stopped.
    expect(await gw.open()).toBe(0);
    expect(sample(await gw.scrape(), 'gateway_live_watcher_state{backend="east",state="STOPPED"}')).toBe(1);
  });

  it('should close sockets with 1012 when the CLI gets SIGTERM, and exit 0', async () => {
    const root = join(__dirname, '..', '..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(child, 'exit');
    try {
      await waitFor(() => /ready at (\S+)/.test(out), 'the demo gateway', 30_000);
      const url = /ready at (\S+)/.exec(out)![1]!.replace(/^http/, 'ws');
      const c = await ackedClient(url, {});
      child.kill('SIGTERM');
      expect((await c.closed).code).toBe(1012);
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('should refuse new sockets with 503 once stopping', async () => {
    const gw = await startWsGateway();
    const c = await rawClient(gw.wsUrl);
    // A client that never answers the close frame keeps the shutdown in its socket phase for a while.
    (c.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
    const stopping = gw.gateway.stop();
    // The listener still accepts connections (the HTTP drain comes after the sockets): the gate refuses.
    const r = await upgradeStatus(gw.wsUrl);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body).errors[0].extensions.code).toBe('SHUTTING_DOWN');
    await stopping;
  });

  it('should cut a socket that does not answer pings and close its streams', async () => {
    const gw = await startWsGateway({ ws: { keepAliveMs: 1_000 } });
    const silent = await rawClient(gw.wsUrl, { autoPong: false });
    silent.send({ type: 'connection_init', payload: {} });
    await silent.next();
    await subscribed(silent, 's');
    const polite = await ackedClient(gw.wsUrl);
    expect(await gw.open()).toBe(1);
    expect((await silent.closed).code).toBe(1006);
    await gw.waitOpen(0, 'the stream to be returned');
    // The one that answers stays.
    expect(polite.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('should report sockets, subscriptions per field, queue bytes and closes by code at /metrics', async () => {
    const gw = await startWsGateway();
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 's');
    const m = await gw.metrics();
    expect(m).toMatch(/^gateway_ws_connections 1$/m);
    expect(m).toMatch(/^gateway_ws_subscriptions\{field="volumeChanged"\} 1$/m);
    // One series per transport; the sockets' keep the name they had (`transport="ws"` added).
    for (const transport of ['ws', 'sse', 'multipart'])
      for (const aggregate of ['max', 'sum'])
        expect(m).toMatch(
          new RegExp(`^gateway_ws_queue_bytes\\{aggregate="${aggregate}",transport="${transport}"\\} \\d+$`, 'm'),
        );
    expect(m).toMatch(/^gateway_slow_consumer_cuts_total\{transport="ws",reason="address"\} 0$/m);
    c.send('not json');
    await c.closed;
    await waitFor(
      async () => /^gateway_ws_closes_total\{code="4400"\} 1$/m.test(await gw.metrics()),
      'the close to be counted',
    );
    // Read from the hub at scrape time: the closed socket's subscription is gone.
    await waitFor(
      async () => /^gateway_ws_subscriptions\{field="volumeChanged"\} 0$/m.test(await gw.metrics()),
      'the subscription to be gone',
    );
  });
});
