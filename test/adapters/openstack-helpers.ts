/**
 * Helpers for the OpenStack adapter tests: the real simulator (test/simulators/openstack-helpers)
 * with an `OpenStackBackend` pointed at its Keystone, call options per caller, and `drive`, which
 * checks a pending change until it ends the way the tracker does: the rule goes through JSON
 * (as into Redis) between checks, with the `seen` facts of the last check.
 */
import type { CallOptions } from '../../adapters/contract/call-options';
import type {
  PendingChange,
  ChangeCheck,
  ChangeProgress,
  CompletionRule,
  TrackedChanges,
} from '../../adapters/contract/completion';
import { OpenStackBackend, type OpenStackBackendOptions } from '../../adapters/openstack/backend';
import type { RequestLogEntry } from '../../simulators/openstack';
import { sleep, startCloud, type Cloud } from '../simulators/openstack-helpers';

export interface AdapterCloud extends Cloud {
  backend: OpenStackBackend;
  /** Call options of the demo member, of an admin scoped to demo, and of the other project's member. */
  as: { demo: CallOptions; admin: CallOptions; other: CallOptions };
  close(): Promise<void>;
}

/** A simulator (FAST delays unless given) and a backend `os` on it. */
export async function startAdapterCloud(
  sim: Parameters<typeof startCloud>[0] = {},
  backend: Partial<OpenStackBackendOptions> = {},
): Promise<AdapterCloud> {
  const cloud = await startCloud(sim);
  const b = new OpenStackBackend({
    backend: 'os',
    authUrl: cloud.urls.keystoneUrl,
    operationTimeoutMs: 5000,
    ...backend,
  });
  const adminInDemo = cloud.sim.issueToken({ user: 'admin', project: 'demo' });
  return {
    ...cloud,
    backend: b,
    as: {
      demo: { credential: { token: cloud.t.demo } },
      admin: { credential: { token: adminInDemo } },
      other: { credential: { token: cloud.t.other } },
    },
    close: async () => {
      await b.close();
      await cloud.sim.close();
    },
  };
}

export interface Driven {
  checks: ChangeCheck[];
  /** The rule as last stored (after its JSON round trip). */
  rule: CompletionRule;
  last: ChangeProgress;
  /** Milliseconds from the first check to the terminal one. */
  ms: number;
}

/** Checks `pending` every `everyMs` until it is no longer RUNNING (throws after `withinMs`). */
export async function drive(
  b: TrackedChanges,
  pending: PendingChange | null,
  o: CallOptions,
  withinMs = 3000,
  everyMs = 10,
): Promise<Driven> {
  if (!pending) throw new Error('the change finished at once: nothing to drive');
  let rule = JSON.parse(JSON.stringify(pending.rule)) as CompletionRule;
  const checks: ChangeCheck[] = [];
  const start = Date.now();
  for (;;) {
    const c = await b.checkChange(rule, o);
    checks.push(c);
    rule = JSON.parse(JSON.stringify({ ...rule, seen: c.seen })) as CompletionRule;
    if (c.progress.state !== 'RUNNING') return { checks, rule, last: c.progress, ms: Date.now() - start };
    if (Date.now() - start > withinMs)
      throw new Error(`the change did not end within ${withinMs} ms: ${JSON.stringify(c)}`);
    await sleep(everyMs);
  }
}

/** The simulator's log entries of one service after `since` entries, as `METHOD path[ action]`. */
export function calls(log: RequestLogEntry[], service: RequestLogEntry['service']): string[] {
  return log
    .filter((e) => e.service === service)
    .map((e) => `${e.method} ${e.path.replace(/\/v3\/[0-9a-f]{32}/, '/v3/{p}')}${e.action ? ` ${e.action}` : ''}`);
}

export const GIB = 1024 ** 3;
