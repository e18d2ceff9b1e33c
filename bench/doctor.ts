/**
 * The volume doctor's cost (docs/doctor.md, "How it runs"):
 *
 * (a) the CPU of a full pass over 10,000 volumes for each backend's checks: the backends' real
 *     `diagnosis` facets (built by the registry from their default settings) run by the doctor's own
 *     engine (`BackendDoctor`, subscriptions/doctor/backend-doctor.ts) on views made with each
 *     adapter's own wire → model mapping: Nomad volumes with claims of running, terminal and
 *     collected allocations and a plugin listing with unhealthy nodes; Cinder volumes with
 *     attachments in every timed and error status and a Nova listing of their servers (with
 *     dangling mappings and deleted servers); the memory backend's own data (generated, with each
 *     kind's condition added) read through its own facts read and watcher. The first pass (which
 *     opens every problem) is reported apart from the later ones (p50 and max).
 * (b) the extra backend calls per pass, counted in the simulators' request logs around the real
 *     facts reads (`readFacts` with the service credential, as the doctor calls it), and per minute
 *     at the default interval: calls per pass × passes per minute (derived, not a timed window).
 *
 *   node --import tsx bench/doctor.ts
 *   DOCTOR_SHORT=1           quick mode: 5 passes (else 20); writes nowhere unless BENCH_OUT is set
 *   DOCTOR_VOLUMES=n         volumes per view (default 10,000)
 *   DOCTOR_PASSES=n          passes after the first (default 20, quick 5)
 *   DOCTOR_SERVERS=n         Nova servers for the calls count (default 2,500: three pages of 1,000)
 *   BENCH_OUT=path           write the section here (default bench/RESULTS.md in full mode)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallOptions } from '../adapters/contract/call-options';
import type { Diagnosis } from '../adapters/contract/diagnosis';
import type { Volume } from '../adapters/contract/model';
import type { VolumeBackend } from '../adapters/contract/backend';
import { addCondition } from '../adapters/memory/data/conditions';
import { generateSeed } from '../adapters/memory/data/seed';
import { toVolume as nomadVolume } from '../adapters/nomad/volumes/results';
import { toVolume as cinderVolume } from '../adapters/openstack/cinder/results';
import { BackendDoctor } from '../subscriptions/doctor/backend-doctor';
import { RunningOperations } from '../subscriptions/doctor/running-operations';
import { DOCTOR_DEFAULTS } from '../subscriptions/doctor';
import { createRegistry } from '../server/backends';
import { loadConfig } from '../server/config';
import { NomadSimulator } from '../simulators/nomad';
import { OpenStackSimulator } from '../simulators/openstack';
import { BENCH_TOKEN } from './constants';
import { machineFacts } from './processes';
import { writeSection } from './results-file';
import { seedNomadBench } from './seed';
import { nomadFacts, nomadWire, novaFacts, cinderWire } from './doctor-views';

const short = process.env.DOCTOR_SHORT === '1';
const VOLUMES = Number(process.env.DOCTOR_VOLUMES ?? 10_000);
const PASSES = Number(process.env.DOCTOR_PASSES ?? (short ? 5 : 20));
const SERVERS = Number(process.env.DOCTOR_SERVERS ?? 2_500);
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const PER_MINUTE = 60_000 / DOCTOR_DEFAULTS.intervalMs;

/** A registry of one backend with its default settings (no backend is called by the checks). */
function backendOf(env: Record<string, string>): { b: VolumeBackend; close: () => Promise<void> } {
  const registry = createRegistry(loadConfig(env).backends);
  return { b: registry.all[0]!, close: () => registry.close() };
}

/** The facet with its facts read replaced by `facts`: the checks are the backend's own. */
function withFacts(d: Diagnosis, facts: unknown): Diagnosis {
  return {
    kinds: d.kinds,
    readFacts: () => Promise.resolve(facts),
    checkVolume: (v, f, ctx) => d.checkVolume(v, f, ctx),
    ...(d.checkFacts ? { checkFacts: (f: unknown, inView, ctx) => d.checkFacts!(f, inView, ctx) } : {}),
  };
}

interface PassFigures {
  backend: string;
  volumes: number;
  problems: number;
  first: { checkMs: number; cpuMs: number };
  later: { p50: number; max: number; cpuMin: number; cpuP50: number; cpuMax: number };
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

/** Passes of the doctor's engine over `view`: the first, then `PASSES` more. */
async function passes(label: string, d: Diagnosis, view: readonly Volume[], o: CallOptions): Promise<PassFigures> {
  // Each pass 15 minutes after the last, so conditions dated from when the doctor first saw them
  // (a collected allocation's claim, a drift, a memory plugin) pass their thresholds by the second.
  let clock = Date.now();
  const doctor = new BackendDoctor(
    label,
    d,
    new RunningOperations(),
    () => undefined,
    () => clock,
  );
  const one = async (): Promise<{ checkMs: number; cpuMs: number }> => {
    clock += 15 * 60_000;
    const c0 = process.cpuUsage();
    await doctor.pass(() => view, o);
    const c = process.cpuUsage(c0);
    return { checkMs: doctor.lastPass!.checkMs, cpuMs: (c.user + c.system) / 1000 };
  };
  const first = await one();
  const later: Array<{ checkMs: number; cpuMs: number }> = [];
  for (let i = 0; i < PASSES; i++) later.push(await one());
  const ms = later.map((p) => p.checkMs);
  const cpu = later.map((p) => p.cpuMs);
  return {
    backend: label,
    volumes: view.length,
    problems: doctor.problems().length,
    first,
    later: {
      p50: quantile(ms, 0.5),
      max: Math.max(...ms),
      cpuMin: Math.min(...cpu),
      cpuP50: quantile(cpu, 0.5),
      cpuMax: Math.max(...cpu),
    },
  };
}

const DUMMY: CallOptions = { credential: {} };

async function nomadPasses(): Promise<PassFigures> {
  const { b, close } = backendOf({ GATEWAY_BACKENDS: 'nomad=nomad@http://127.0.0.1:9' });
  try {
    const now = Date.now();
    const view = nomadWire(VOLUMES, now).map((w) => nomadVolume(b.id, w));
    return await passes('Nomad', withFacts(b.diagnosis!, nomadFacts(now)), view, DUMMY);
  } finally {
    await close();
  }
}

async function openstackPasses(): Promise<PassFigures> {
  const { b, close } = backendOf({ GATEWAY_BACKENDS: 'openstack=openstack@http://127.0.0.1:9' });
  try {
    const now = Date.now();
    const wire = cinderWire(VOLUMES, now);
    const view = wire.volumes.map((v) => cinderVolume(b.id, wire.project, v));
    return await passes('OpenStack', withFacts(b.diagnosis!, novaFacts(wire)), view, DUMMY);
  } finally {
    await close();
  }
}

/** The memory backend's own data: a generated set, its hosts declared, and 1 % of volumes in each kind's condition. */
async function memoryPasses(): Promise<PassFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-doctor-'));
  const per = Math.max(1, Math.floor(VOLUMES / 100));
  const data = generateSeed({ volumes: VOLUMES - 5 * per, attachmentsPerVolume: 2 });
  const hosts = new Map<string, string[]>();
  for (const v of data.volumes)
    for (const a of v.attachments ?? []) hosts.set(a.host, [...(hosts.get(a.host) ?? []), `${v.namespace}/${v.id}`]);
  data.hosts = [...hosts].map(([name, volumes]) => ({ name, volumes }));
  const at = new Date(Date.now() - 3_600_000).toISOString();
  for (const kind of [
    'STUCK_CLAIM',
    'CLAIM_ON_MISSING_PLUGIN',
    'STUCK_TRANSITION',
    'ERROR_STATE',
    'ATTACHMENT_DRIFT',
  ] as const)
    for (let i = 0; i < per; i++) addCondition(data, kind, 'default', `${kind.toLowerCase()}-${i}`, at);
  const file = join(dir, 'data.json');
  writeFileSync(file, JSON.stringify(data));
  const { b, close } = backendOf({
    GATEWAY_BACKENDS: 'lab=memory',
    GATEWAY_BACKEND_LAB_DATA_FILE: file,
    GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '0',
  });
  const w = b.watching!.createWatcher({ onDeltas: () => undefined });
  try {
    if ('unavailable' in w) throw new Error(w.unavailable);
    w.start();
    const credential = (await b.subscriberAccess!.serviceCredential())!;
    return await passes('memory', b.diagnosis!, w.volumes(), { credential });
  } finally {
    if (!('unavailable' in w)) await w.stop();
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface CallFigures {
  backend: string;
  setup: string;
  perPass: number;
  calls: string;
}

/** Calls of `n` facts reads after a warm one (Keystone's token and catalog, read once, left out). */
async function countCalls(read: () => Promise<unknown>, log: { clear(): void; calls(): string[] }, n = 3) {
  await read();
  log.clear();
  for (let i = 0; i < n; i++) await read();
  const calls = log.calls();
  const distinct = [...new Set(calls)].map((c) => `\`${c}\` × ${calls.filter((x) => x === c).length / n}`);
  return { perPass: calls.length / n, calls: distinct.join(', ') };
}

async function nomadCalls(): Promise<CallFigures[]> {
  const sim = new NomadSimulator({ acl: { enabled: true } });
  seedNomadBench(sim);
  await sim.listen(0, '127.0.0.1');
  const { b, close } = backendOf({ GATEWAY_BACKENDS: `n=nomad@${sim.url}`, GATEWAY_BACKEND_N_TOKEN: BENCH_TOKEN });
  try {
    const o = { credential: (await b.subscriberAccess!.serviceCredential())! };
    const log = {
      clear: () => sim.clearRequests(),
      calls: () =>
        sim.requests().map((r) => `${r.method} ${r.path.replace(/\/plugin\/csi\/[^/?]+/, '/plugin/csi/:id')}`),
    };
    const healthy = await countCalls(() => b.diagnosis!.readFacts!(o), log);
    sim.setNodePluginHealth('aws-ebs0', 'node-bench-1', false);
    const degraded = await countCalls(() => b.diagnosis!.readFacts!(o), log);
    return [
      { backend: 'Nomad', setup: '1 plugin, all healthy', ...healthy },
      { backend: 'Nomad', setup: '1 plugin, a node instance down', ...degraded },
    ];
  } finally {
    await close();
    await sim.close();
  }
}

async function openstackCalls(): Promise<CallFigures> {
  const sim = new OpenStackSimulator({});
  const project = sim.addProject({ name: 'bench' });
  sim.addUser({ name: 'doctor', password: 'doctor-secret', projects: { bench: ['admin', 'member', 'reader'] } });
  for (let s = 0; s < SERVERS; s++) {
    const server = sim.seedServer({ project, name: `srv-${s}` });
    if (s % 2 === 0) sim.attachNow(server, sim.seedVolume({ project, name: `vol-${s}`, size: 1 }));
  }
  const urls = await sim.listen();
  const { b, close } = backendOf({
    GATEWAY_BACKENDS: `os=openstack@${urls.keystoneUrl}`,
    GATEWAY_BACKEND_OS_USERNAME: 'doctor',
    GATEWAY_BACKEND_OS_PASSWORD: 'doctor-secret',
    GATEWAY_BACKEND_OS_PROJECT_NAME: 'bench',
  });
  try {
    const o = { credential: (await b.subscriberAccess!.serviceCredential())! };
    const log = {
      clear: () => sim.clearRequests(),
      calls: () => sim.requests().map((r) => `${r.method} ${r.path.split('?')[0]}`),
    };
    const c = await countCalls(() => b.diagnosis!.readFacts!(o), log);
    return { backend: 'OpenStack', setup: `${SERVERS} servers (admin service user: all projects)`, ...c };
  } finally {
    await close();
    await sim.close();
  }
}

const f1 = (n: number): string => n.toFixed(1);

/** Whether the later passes' CPU p50 met the 50 ms target, per backend. */
const target = (figures: PassFigures[]): string =>
  figures
    .map((p) => `${p.backend} ${p.later.cpuP50 < 50 ? 'met' : 'not met'} (CPU p50 ${f1(p.later.cpuP50)} ms)`)
    .join(', ');

async function main(): Promise<void> {
  const figures = [await nomadPasses(), await openstackPasses(), await memoryPasses()];
  const load = loadavg();
  const rows = figures.map(
    (p) =>
      `| ${p.backend} | ${p.volumes} | ${p.problems} | ${f1(p.first.checkMs)} | ${f1(p.later.p50)} / ${f1(p.later.max)} | ${f1(p.later.cpuMin)} / ${f1(p.later.cpuP50)} / ${f1(p.later.cpuMax)} |`,
  );
  for (const p of figures)
    console.log(`ratio: ${p.backend} full pass over ${p.volumes} volumes, p50 ms = ${f1(p.later.p50)}`);
  const calls = [...(await nomadCalls()), await openstackCalls()];
  const callRows = calls.map(
    (c) => `| ${c.backend} | ${c.setup} | ${c.perPass} | ${c.perPass * PER_MINUTE} | ${c.calls} |`,
  );
  for (const c of calls) console.log(`ratio: ${c.backend}, ${c.setup}: extra calls per pass = ${c.perPass}`);
  console.log([...rows, ...callRows].join('\n'));
  if (short && !process.env.BENCH_OUT) return;
  writeSection(
    out,
    'doctor',
    `## Volume doctor

Generated by \`bench/doctor.ts\` on ${new Date().toISOString()}.

${machineFacts()}

**A full pass's CPU.** Each backend's own \`diagnosis\` checks (default thresholds) run by the
doctor's engine (\`BackendDoctor\`) over ${VOLUMES} volumes in one process: the view built with the
adapter's own wire → model mapping (Nomad: 60 % claimed by running allocations, 3 % by terminal
ones, 1 % by collected ones, a plugin listing with 2 of 50 node instances down; OpenStack: 40 %
attached, 1 % in each timed and error status, a Nova listing of the servers with 1 % dangling
mappings and 1 % deleted servers), the memory backend's own data (generated, hosts declared, 1 %
in each kind's condition) through its own facts read and watcher. The facts are read once per pass
(Nomad and OpenStack: given, as read; memory: its store). "checks ms" is the engine's own figure
(\`gateway_doctor_pass_seconds{phase="checks"}\`); "CPU ms" the process's user + system time
around the pass. Each pass runs 15 minutes after the last on the doctor's clock, so the first
opens the problems dated by the backend and the second those dated from first sight; then
${PASSES - 1} more. Run under tsx, with the machine's load average at ${load.map((l) => l.toFixed(1)).join(', ')} (1, 5, 15 min) when the passes ended: the CPU figures are the process's own, the
checks ms are wall time and include waiting for a core. Target: under 50 ms; ${target(figures)}.

| backend | volumes | open problems | first pass, checks ms | later passes, checks ms p50 / max | CPU ms min / p50 / max |
|---|---|---|---|---|---|
${rows.join('\n')}

**Extra backend calls.** The real facts reads (\`readFacts\`, the service credential, as the doctor
calls them) against the simulators, counted in their request logs over 3 reads after a warm one
(OpenStack's Keystone token and catalog are read once and cached, so left out). Per minute =
calls per pass × passes per minute at the default \`DOCTOR_INTERVAL_MS\` (${DOCTOR_DEFAULTS.intervalMs} ms):
derived from the counted calls, not from a timed window. Between passes the doctor calls nothing
(watcher deltas are checked on the view). memory: no backend call (one look at its store).

| backend | setup | calls per pass | per minute | calls |
|---|---|---|---|---|
${callRows.join('\n')}
`,
  );
  console.log(`wrote the doctor section of ${out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
