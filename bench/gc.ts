/**
 * Young-generation GC per request: what survives each scavenge and what the scavenges cost, for
 * the plain list of 100 on the Nomad and the OpenStack benchmark simulators and for `{ __typename }`
 * (no backend call). The gateway runs with `node --trace-gc-nvp`; its scavenge lines between the
 * warm-up and the end of the counted requests are summed.
 *
 * Why: objects that outlive scavenges are copied and promoted, and that work grows with everything
 * they reference. Two object shapes made every request's objects survive on Node 20 (issue 20;
 * docs/architecture.md, "Allocation on the hot path"). The bytes surviving each scavenge do not
 * depend on load; the milliseconds do (the gateway is pinned to CPU 0, the simulators and this
 * process to CPU 1).
 *
 *   node --import tsx bench/gc.ts
 *   GC_SHORT=1      quick mode: 100 lists, 300 `{ __typename }` (else 1,000 and 3,000)
 *   BENCH_OUT=path  write the section here (default: bench/RESULTS.md in full mode, nowhere in quick mode)
 */
import { join } from 'node:path';
import { Pool } from 'undici';
import { canPin, killStarted, machineFacts, start, startBuiltGateway, type Started } from './processes';
import { BENCH_TOKEN, OPENSTACK_SIM_READY, UNWATCHED_GATEWAY_ENV } from './constants';
import { PLAIN_LIST } from './queries';
import { writeSection } from './results-file';

const short = process.env.GC_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const GATEWAY_CPU = canPin ? '0' : undefined;
const SIM_CPU = canPin ? '1' : undefined;

/** Scavenges seen in the counted window. */
interface Scavenges {
  count: number;
  /** Bytes that survived (copied or promoted), summed. */
  survived: number;
  promoted: number;
  /** Pause, ms, summed. */
  ms: number;
}

/** What a `--trace-gc-nvp` gateway's scavenges added up to since `reset()`. */
interface ScavengeLog {
  reset(): void;
  read(): Scavenges;
}

/** Collects the `gc=s` lines a `--trace-gc-nvp` gateway prints (one listener per gateway). */
function scavengeLog(g: Started): ScavengeLog {
  let s: Scavenges = { count: 0, survived: 0, promoted: 0, ms: 0 };
  let rest = '';
  g.child.stdout!.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      if (!/ gc=s /.test(l)) continue;
      const field = (k: string): number => Number(new RegExp(` ${k}=([\\d.]+)`).exec(l)?.[1] ?? 0);
      s.count++;
      s.survived += field('new_space_survived');
      s.promoted += field('promoted');
      s.ms += field('pause');
    }
  });
  return {
    reset: () => void (s = { count: 0, survived: 0, promoted: 0, ms: 0 }),
    read: () => s,
  };
}

/** One row: `n` sequential requests of `query` after a warm-up, and the scavenges they caused. */
async function measure(
  label: string,
  gateway: Started,
  log: ScavengeLog,
  headers: Record<string, string>,
  query: string,
  n: number,
): Promise<string> {
  const url = new URL(gateway.match[1]!.replace('localhost', '127.0.0.1'));
  const pool = new Pool(url.origin, { connections: 1 });
  const body = JSON.stringify({ query });
  const once = async (): Promise<void> => {
    const res = await pool.request({
      method: 'POST',
      path: url.pathname,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200 || text.includes('"errors"'))
      throw new Error(`${label}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  };
  for (let i = 0; i < Math.max(50, n / 5); i++) await once();
  log.reset();
  for (let i = 0; i < n; i++) await once();
  await pool.close();
  const s = log.read();
  const mb = (b: number): string => (s.count ? (b / s.count / 1024 / 1024).toFixed(2) : '–');
  const row = `| ${label} | ${n} | ${s.count} | ${mb(s.survived)} | ${mb(s.promoted)} | ${s.count ? (s.ms / s.count).toFixed(1) : '–'} | ${(s.ms / n).toFixed(3)} |`;
  console.log(row);
  console.log(`ratio: ${label}: MB surviving each scavenge = ${mb(s.survived)}`);
  return row;
}

async function main(): Promise<void> {
  const lists = short ? 100 : 1000;
  const [nomadSim, osSim] = await Promise.all([
    start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/, [], SIM_CPU),
    start(['bench/openstack-sim-server.ts'], {}, OPENSTACK_SIM_READY, [], SIM_CPU),
  ]);
  const gc = ['--trace-gc-nvp'];
  const nomad = await startBuiltGateway(
    { ...UNWATCHED_GATEWAY_ENV, GATEWAY_BACKENDS: `bench=nomad@${nomadSim.match[1]}` },
    /ready at (\S+)/,
    gc,
    GATEWAY_CPU,
  );
  const nomadAuth = { 'x-nomad-token': BENCH_TOKEN };
  const nomadLog = scavengeLog(nomad);
  const rows = [
    await measure('Nomad list of 100', nomad, nomadLog, nomadAuth, PLAIN_LIST, lists),
    await measure('{ __typename } (Nomad configured)', nomad, nomadLog, nomadAuth, '{ __typename }', lists * 3),
  ];
  nomad.child.kill('SIGTERM');
  const os = await startBuiltGateway(
    { ...UNWATCHED_GATEWAY_ENV, GATEWAY_BACKENDS: `os=openstack@${osSim.match[1]}` },
    /ready at (\S+)/,
    gc,
    GATEWAY_CPU,
  );
  rows.push(
    await measure(
      'OpenStack list of 100',
      os,
      scavengeLog(os),
      { 'x-auth-token': osSim.match[5]! },
      PLAIN_LIST,
      lists / 2,
    ),
  );
  // The quick mode writes where bench/quick.ts says (a scratch file), never into RESULTS.md by default.
  if (short && !process.env.BENCH_OUT) return;
  writeSection(
    out,
    'gc',
    `## Young-generation GC per request

Generated by \`bench/gc.ts\` on ${new Date().toISOString()}.

${machineFacts()}

The compiled gateway under \`node --trace-gc-nvp\`, pinned to CPU 0 (the simulators and the client on
CPU 1), one connection, sequential requests after a fifth as many uncounted; no service credential,
so no watcher. Per scavenge: bytes that survived it (copied or promoted) and its pause. The bytes do
not depend on load; the milliseconds do.

| query | requests | scavenges | MB surviving each | MB promoted each | ms each | scavenge ms per request |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`,
  );
  console.log(`wrote the gc section of ${out}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(killStarted);
