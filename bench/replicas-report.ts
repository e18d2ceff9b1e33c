/**
 * bench/replicas.ts's results as markdown (section `replicas` of bench/RESULTS.md): backend
 * requests per minute, the watcher-load target, Redis' cost, failover and the take-over at scale.
 */
import { machineFacts } from './processes';
import type { RedisWindow } from './redis-stats';

/** Part 1's figures for one configuration and subscriber count. */
export interface Load {
  label: string;
  subscribers: number;
  /** Subscriptions that were live (SUBSCRIBED) for the window. */
  subscribed: number;
  /** Per minute, by "service|caller kind". */
  perMinute: Map<string, number>;
  /** Changes made in the window (claims and releases). */
  changes: number;
  /** The service credential's requests in the window. */
  service: number;
  /** What Redis did over a window without changes just before (on Redis only). */
  idle: RedisWindow | null;
  /** What Redis did over the window (on Redis only). */
  redis: RedisWindow | null;
}

/** Part 3's figures. */
export interface Takeover {
  volumes: number;
  leaseMs: number;
  currentMs: number;
  requests: Map<string, number>;
  snapshotBytes: number;
  streamBytes: number;
}

/** How the run was set up. */
export interface RunFacts {
  short: boolean;
  windowMs: number;
  idleMs: number;
  counts: number[];
  ttlMs: number;
}

const fmt = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(1));
const perMin = (calls: number, w: RedisWindow): number => (calls * 60_000) / w.ms;
const total = (w: RedisWindow): number => [...w.commands.values()].reduce((s, c) => s + c.calls, 0);
const scripted = (w: RedisWindow): number => [...w.inScripts.values()].reduce((s, c) => s + c, 0);

/**
 * Redis' cost per configuration on Redis: commands per minute by command (commands that Lua
 * scripts run counted under their own names too, as commandstats counts them; how many of them
 * ran inside scripts from MONITOR), per event above the idle rate, and per subscriber.
 */
function redisCost(loads: Load[], counts: number[]): string {
  const on = loads.filter((l) => l.redis && l.idle);
  if (on.length === 0) return '';
  const names = [...new Set(on.flatMap((l) => [...l.redis!.commands.keys()]))].sort();
  const rows = names.map((k) => {
    const cells = on.map((l) => {
      const w = l.redis!;
      const c = w.commands.get(k)?.calls ?? 0;
      const s = w.inScripts.get(k) ?? 0;
      return s > 0 ? `${fmt(perMin(c, w))} (${fmt(perMin(s, w))} in scripts)` : fmt(perMin(c, w));
    });
    return `| \`${k}\` | ${cells.join(' | ')} |`;
  });
  /** Calls above what the same configuration sent idle, per entry appended in the window. */
  const perEvent = (l: Load, f: (w: RedisWindow) => number): number => {
    const w = l.redis!;
    const idle = l.idle!;
    return (f(w) - (f(idle) * w.ms) / idle.ms) / Math.max(1, w.entries);
  };
  const sent = (w: RedisWindow): number => total(w) - scripted(w);
  const marginal = (l: Load): string => {
    const base = on.find((x) => x.label === l.label && x.subscribers === Math.min(...counts));
    if (!base || base === l) return '–';
    return (
      (perMin(sent(l.redis!), l.redis!) - perMin(sent(base.redis!), base.redis!)) /
      (l.subscribed - base.subscribed)
    ).toFixed(4);
  };
  const usec = (w: RedisWindow): number => [...w.commands.values()].reduce((s, c) => s + c.usec, 0);
  const summary: Array<[string, (l: Load) => string]> = [
    ['**all commands**', (l) => fmt(perMin(total(l.redis!), l.redis!))],
    ['**sent by the replicas** (all − run inside scripts)', (l) => fmt(perMin(sent(l.redis!), l.redis!))],
    ['sent by the replicas, idle (no changes)', (l) => fmt(perMin(sent(l.idle!), l.idle!))],
    ['stream entries appended (events and view-only entries)', (l) => fmt(perMin(l.redis!.entries, l.redis!))],
    ['**per entry appended, above idle: sent / all**', (l) => `${fmt(perEvent(l, sent))} / ${fmt(perEvent(l, total))}`],
    [`**per subscriber per minute, sent** (against the ${Math.min(...counts)}-subscriber column)`, (l) => marginal(l)],
    [
      'Redis CPU, ms per minute (idle)',
      (l) => `${fmt(perMin(l.redis!.cpuMs, l.redis!))} (${fmt(perMin(l.idle!.cpuMs, l.idle!))})`,
    ],
    ['time in commands, ms per minute (commandstats usec)', (l) => fmt(perMin(usec(l.redis!), l.redis!) / 1000)],
  ];
  return `**Redis cost** (from \`INFO commandstats\` read before and after each column's window, the
benchmark's own INFO taken out; calls per minute). Commandstats counts the commands a Lua script
runs under their own names as well as the script's \`evalsha\`: "in scripts" is how many of them
ran inside scripts (\`MONITOR\` over the same window), so "sent by the replicas" is what crossed
the network. "Per entry appended, above idle" takes the same configuration's rate over a
${(on[0]!.idle!.ms / 1000) | 0} s window without changes (just before) out of the window's calls and divides the rest by the
stream entries appended; "per subscriber" is the difference in calls per minute with the column
with the fewest subscribers (same replica count) over the difference in subscribers.

| Redis | ${on.map((l) => `${l.label}, ${l.subscribed} sub.`).join(' | ')} |
|---|${on.map(() => '---|').join('')}
${rows.join('\n')}
${summary.map(([label, f]) => `| ${label} | ${on.map(f).join(' | ')} |`).join('\n')}
`;
}

export function report(loads: Load[], failoverMs: number[], big: Takeover | null, facts: RunFacts): string {
  const { short, windowMs, counts, ttlMs: ttl } = facts;
  const keys = [...new Set(loads.flatMap((l) => [...l.perMinute.keys()]))].sort();
  const rows = keys.map(
    (k) => `| ${k.replace('|', ': ')} | ${loads.map((l) => fmt(l.perMinute.get(k) ?? 0)).join(' | ')} |`,
  );
  // Per change: the watcher reads a volume once per claim or release, and how many changes fit in a
  // window varies by one or two, which per minute would read as a 10 % difference.
  const watcher = (l: Load): number => l.service / Math.max(1, l.changes);
  const ratio = counts.map((n) => {
    const one = loads.find((l) => l.label === '1 replica on Redis' && l.subscribers === n)!;
    const three = loads.find((l) => l.label === '3 replicas on Redis' && l.subscribers === n)!;
    const r = watcher(three) / watcher(one);
    console.log(`ratio: watcher load 3 replicas / 1 replica, ${n} subscribers = ${r.toFixed(2)}`);
    return `| ${n} | ${watcher(one).toFixed(2)} (${one.service} in ${one.changes} changes) | ${watcher(three).toFixed(2)} (${three.service} in ${three.changes}) | ${r.toFixed(2)} | ${Math.abs(r - 1) <= 0.1 ? 'met' : 'not met'} |`;
  });
  const worst = Math.max(...failoverMs);
  if (failoverMs.length > 0) console.log(`ratio: failover ms / (TTL + 1 s) = ${(worst / (ttl + 1000)).toFixed(2)}`);
  const failoverText =
    failoverMs.length === 0
      ? 'not run.'
      : `${failoverMs.map((m) => `${(m / 1000).toFixed(1)} s`).join(', ')}; target at most TTL + 1 s = ${(ttl + 1000) / 1000} s: ${worst <= ttl + 1000 ? 'met' : 'not met'}.`;
  const md = `## Replicas on one Redis (bench/replicas.ts)

Generated by \`bench/replicas.ts\`${short ? ' (REPLICAS_SHORT=1)' : ''} on ${new Date().toISOString()}: one simulated
Nomad (100 volumes), a claim or a release of one volume every second for ${windowMs / 1000} s per column,
subscribers on \`volumeChanged\` spread evenly over the replicas with three tokens. Requests per
minute from the simulator's log, by credential (service: the gateway's own token; caller:
subscribers' access checks; no token: the readiness probe's leader read) and kind.

${machineFacts()}

| requests/min | ${loads.map((l) => `${l.label}, ${l.subscribers} sub.${l.subscribed === l.subscribers ? '' : ` (${l.subscribed} subscribed)`}`).join(' | ')} |
|---|${loads.map(() => '---|').join('')}
${rows.join('\n')}

**Watcher and resync load** (the service credential's requests per change), 3 replicas against 1:

| subscribers | 1 replica | 3 replicas | ratio | target (within 10 %) |
|---|---|---|---|---|
${ratio.join('\n')}

Readiness probes stay per replica (each replica's \`/readyz\` says what it can reach): they grow
with the replica count and are the \`no token: readiness probes\` row.

${redisCost(loads, counts)}
**Failover** (two replicas, lease TTL ${ttl / 1000} s): kill -9 of the holder → next event on the
follower's subscriber: ${failoverText}
`;
  const kb = (n: number): string => `${(n / 1_048_576).toFixed(1)} MiB`;
  const bigText = big
    ? `**Take-over at ${big.volumes} volumes** (every fifth claimed; kill -9 of the holder, lease TTL ${ttl / 1000} s):
the other replica held the lease after ${(big.leaseMs / 1000).toFixed(1)} s and its watcher was current again after
${(big.currentMs / 1000).toFixed(1)} s. Backend requests of the take-over: ${[...big.requests]
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}. Redis: the view snapshot ${kb(big.snapshotBytes)}, the event stream ${kb(big.streamBytes)}.
`
    : '';
  return `${md}\n${bigText}`;
}
