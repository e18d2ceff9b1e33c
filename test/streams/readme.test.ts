/**
 * The README's SSE example, run as written with the real `curl` against demo mode (the same code
 * `npm start` runs, demo activity on): the stream opens with SUBSCRIBED, then the demo's claims
 * of `build-cache` arrive as `next` events.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { startDemoBackends, type DemoBackends } from '../../server/demo';
import { createLogger } from '../../server/logger';
import { until } from '../support/until';
import { sseEvents } from './helpers';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const sseCurl = /```sh\n(curl -N [\s\S]*?)```/
  .exec(readme)?.[1]
  ?.replace(/\\\n\s*/g, ' ')
  .trim();

describe("README's SSE example", () => {
  let demo: DemoBackends;
  let gateway: RunningGateway;

  beforeAll(async () => {
    demo = await startDemoBackends({ activity: { intervalMs: 1_000 } });
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry: createRegistry(demo.backends),
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await demo.stop();
  });

  it("should stream SUBSCRIBED, then the demo's claims, to the curl command as written", async () => {
    expect(sseCurl).toContain("-H 'accept: text/event-stream'");
    const args = [...sseCurl!.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1);
    const url = gateway.url.replace('http://', '');
    const child = spawn('curl', ['-s', ...args.map((a) => (a === 'localhost:4000/graphql' ? url : a))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const nexts = (): any[] =>
        sseEvents(out)
          .filter((e) => e.event === 'next')
          .map((e) => JSON.parse(e.data!));
      await until(
        () => nexts().length >= 2,
        () => `SUBSCRIBED and a change; got ${out}`,
        20_000,
      );
      const [first, second] = nexts();
      expect(first.data.volumeChanged).toMatchObject({ type: 'SUBSCRIBED', cursor: expect.any(String) });
      expect(second.data.volumeChanged).toMatchObject({
        type: expect.stringMatching(/^(CLAIMED|RELEASED)$/),
        volume: { nativeId: 'build-cache' },
      });
      expect(second.errors).toBeUndefined();
      process.stdout.write(`${out}\n`);
    } finally {
      child.kill();
    }
  });
});
