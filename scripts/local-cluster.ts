/**
 * `npm run cluster [-- --replicas N --port P]`: several gateway replicas on one machine, as
 * they run in production (docs/scaling.md): a redis-server (loopback, no persistence), the demo's
 * simulated backends started once in this process, N replicas (3 by default) configured with
 * those backends and `REDIS_URL`, and HAProxy in front of them (deploy/haproxy/haproxy.cfg) on
 * `--port` (4000 by default; 0 = any free port). It prints every URL and pid; kill a replica and
 * the load balancer, /live and its clients carry on with the others. SIGINT (Ctrl-C) or SIGTERM
 * stops everything it started. Needs the Debian packages `redis-server` and `haproxy`
 * (scripts/system-deps.sh). `npm run cluster` builds first when the sources changed, as
 * `npm start` does, for the /live page's bundle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoBackends, type DemoBackends } from '../server/demo';
import { startGatewayProcess } from '../test/support/gateway-process';
import { startHaproxy, type HaproxyUnderTest } from '../test/support/haproxy';
import { startRedisServer, type RedisServerUnderTest } from '../test/support/redis';

/** The longest a stop may take before this script exits anyway (every part is killed at exit). */
const STOP_DEADLINE_MS = 15_000;

type Replica = ReturnType<typeof startGatewayProcess>;

/** `--replicas N` and `--port P`, with their defaults. */
function parseArgs(argv: readonly string[]): { replicas: number; port: number } {
  const o = { replicas: 3, port: 4000 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = Number(inline ?? argv[++i]);
    if (flag === '--replicas' && Number.isInteger(value) && value >= 1 && value <= 9) o.replicas = value;
    else if (flag === '--port' && Number.isInteger(value) && value >= 0 && value <= 65535) o.port = value;
    else
      throw new Error(
        `unknown or invalid argument ${argv.slice(i - (inline ? 0 : 1), i + 1).join(' ')}: use --replicas 1..9, --port 0..65535`,
      );
  }
  return o;
}

async function main(): Promise<void> {
  const { replicas: count, port } = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'vg-cluster-'));
  let redis: RedisServerUnderTest | undefined;
  let demo: DemoBackends | undefined;
  let lb: HaproxyUnderTest | undefined;
  const replicas: Replica[] = [];
  let stopping = false;

  // Ctrl-C reaches the whole process group; replicas get SIGINT (no drain: this is the end).
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      setTimeout(() => process.exit(code || 1), STOP_DEADLINE_MS).unref();
      await lb?.stop();
      await Promise.all(
        replicas.map(async (r) => {
          if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGINT');
          await r.closed;
        }),
      );
      await demo?.stop();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
      process.exit(code);
    }
    return new Promise<never>(() => {});
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // A crash of this script takes its replicas along (redis and haproxy kill theirs at exit too).
  process.once('exit', () => {
    for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  });

  try {
    redis = await startRedisServer();
    demo = await startDemoBackends();
    // Every replica serves the same backends, with the demo's service credentials (demo data only).
    const config = join(dir, 'gateway.json');
    writeFileSync(config, JSON.stringify({ backends: demo.backends }, null, 2), { mode: 0o600 });
    for (let i = 0; i < count; i++)
      replicas.push(
        startGatewayProcess({
          GATEWAY_CONFIG: config,
          REDIS_URL: redis.url,
          // Behind HAProxy's X-Forwarded-For: limits count clients, not the load balancer.
          TRUST_PROXY_HOPS: '1',
          LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
        }),
      );
    const urls = await Promise.all(replicas.map((r) => r.serving()));
    lb = await startHaproxy(urls, port === 0 ? {} : { port });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const hint = /could not bind port/.test(message) ? ': --port chooses another, --port 0 any free one' : '';
    console.error(`local cluster: failed to start: ${message}${hint}`);
    for (const r of replicas) if (r.errors()) console.error(r.errors());
    return void (await stop(1));
  }

  const pad = (s: string): string => s.padEnd(15);
  const lines = [
    `Local cluster: Redis, ${count} gateway replica${count === 1 ? '' : 's'} and HAProxy over the demo's simulated backends (files in ${dir})`,
    `  ${pad('load balancer')}${lb.url}/graphql  (live page ${lb.url}/live)`,
    `  ${pad('haproxy')}pid ${lb.pid}  stats ${lb.statsUrl} (each replica UP or DOWN)  config ${lb.configPath}`,
    `  ${pad('redis')}${redis.url}  pid ${redis.process.pid} (no persistence)`,
    ...replicas.map(
      (r, i) => `  ${pad(`replica ${i + 1}`)}${/ready at (\S+)/.exec(r.output())![1]}  pid ${r.child.pid}`,
    ),
    // The demo's own first line says "Demo mode"; here the replicas are configured, not in demo mode.
    `${demo.banner[0]!.replace(/^Demo mode: serving/, 'Every replica serves the same').replace(/\.$/, '')} (started once, in this process):`,
    ...demo.banner.slice(1),
    `  /live headers: ${JSON.stringify(demo.headers)}`,
    `Kill a replica (kill <pid>: it drains, then closes its WebSockets with 1012; kill -9 <pid>: a crash) and watch ${lb.url}/live carry on through the others. Ctrl-C stops everything.`,
  ];
  console.log(lines.join('\n'));

  // What changes while it runs: HAProxy's view of each replica, and a replica that exits.
  lb.process.stderr!.on('data', (d: Buffer) => {
    for (const l of d.toString().split('\n')) if (/^Server replicas\//.test(l)) console.log(`haproxy: ${l}`);
  });
  replicas.forEach((r, i) =>
    r.child.once('exit', (code, signal) => {
      if (!stopping) console.log(`replica ${i + 1} (pid ${r.child.pid}) exited (${signal ?? `code ${code}`})`);
    }),
  );
}

main().catch((err: unknown) => {
  console.error('local cluster:', err);
  process.exit(1);
});
