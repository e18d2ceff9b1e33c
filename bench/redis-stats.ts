/**
 * What Redis did over a benchmark's window: `INFO commandstats` (calls and time by command, the
 * commands Lua scripts run counted under their own names as well), `INFO cpu`, and the event
 * stream's `entries-added`, read before and after; and, through `MONITOR` over the same window,
 * which of those calls ran inside scripts (so the calls the replicas sent are the rest).
 */
import type { Redis } from 'ioredis';

/** Calls and time of one command (`cmdstat_<name>`; subcommands as `xinfo|stream`). */
export interface CommandStat {
  calls: number;
  usec: number;
}

/** One reading. */
interface Reading {
  commands: Map<string, CommandStat>;
  /** used_cpu_user + used_cpu_sys, ms. */
  cpuMs: number;
  /** The event stream's entries-added (0 when it does not exist yet). */
  entriesAdded: number;
  at: number;
}

/** What Redis did over a window. */
export interface RedisWindow {
  /** Calls and time by command (the benchmark's own INFO taken out). */
  commands: Map<string, CommandStat>;
  /** Of those, calls run inside Lua scripts, by command (MONITOR). */
  inScripts: Map<string, number>;
  cpuMs: number;
  /** Entries appended to the event stream (events and view-only entries). */
  entries: number;
  ms: number;
}

/** A reading's INFO, as MONITOR shows it. */
const READING = 'info cpu commandstats';

/**
 * One reading. The stream is read before the INFO in the first reading and after it in the last,
 * so that the window between the two INFOs holds none of the benchmark's own commands.
 */
async function read(r: Redis, stream: string, first: boolean): Promise<Reading> {
  const entries = async (): Promise<number> => {
    if ((await r.exists(stream)) === 0) return 0;
    const x = (await r.call('XINFO', 'STREAM', stream)) as unknown[];
    return Number(x[x.indexOf('entries-added') + 1]);
  };
  const early = first ? await entries() : 0;
  const info = (await r.call('INFO', 'cpu', 'commandstats')) as string;
  const entriesAdded = first ? early : await entries();
  const commands = new Map<string, CommandStat>();
  for (const m of info.matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm))
    commands.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  const num = (k: string): number => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return { commands, cpuMs: (num('used_cpu_user') + num('used_cpu_sys')) * 1000, entriesAdded, at: Date.now() };
}

/**
 * Starts watching Redis through `r` (a client of the benchmark's own; MONITOR takes a duplicate)
 * and the event stream `stream`; `stop()` answers what happened since.
 */
export async function watchRedis(r: Redis, stream: string): Promise<{ stop(): Promise<RedisWindow> }> {
  const monitor = await r.monitor();
  /** Calls inside scripts by command and first argument (`name sub`), between the two readings. */
  const inScripts = new Map<string, number>();
  // MONITOR lists commands in the order Redis ran them, the readings' own INFO among them: the
  // calls between those two are the ones the commandstats delta counts.
  let readings = 0;
  let secondSeen: () => void = () => {};
  const second = new Promise<void>((resolve) => (secondSeen = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args.join(' ').toLowerCase() === READING) {
      if (++readings === 2) secondSeen();
      return;
    }
    if (source !== 'lua' || readings !== 1) return;
    const k = `${args[0]!.toLowerCase()} ${(args[1] ?? '').toLowerCase()}`;
    inScripts.set(k, (inScripts.get(k) ?? 0) + 1);
  });
  const before = await read(r, stream, true);
  return {
    async stop() {
      const after = await read(r, stream, false);
      await second;
      monitor.disconnect();
      const commands = new Map<string, CommandStat>();
      for (const [k, v] of after.commands) {
        const b = before.commands.get(k) ?? { calls: 0, usec: 0 };
        // The first reading's INFO is counted in the second.
        const calls = v.calls - b.calls - (k === 'info' ? 1 : 0);
        if (calls > 0) commands.set(k, { calls, usec: v.usec - b.usec });
      }
      // MONITOR names a command with subcommands by its first word: commandstats by both.
      const scripted = new Map<string, number>();
      for (const [key, calls] of inScripts) {
        const [name, sub] = key.split(' ');
        const k = commands.has(`${name}|${sub}`) ? `${name}|${sub}` : name!;
        scripted.set(k, (scripted.get(k) ?? 0) + calls);
      }
      return {
        commands,
        inScripts: scripted,
        cpuMs: after.cpuMs - before.cpuMs,
        entries: after.entriesAdded - before.entriesAdded,
        ms: after.at - before.at,
      };
    },
  };
}
