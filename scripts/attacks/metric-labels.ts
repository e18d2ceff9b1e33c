/**
 * R12 of docs/reliability.md against a running gateway: operation names an attacker chooses must
 * not take the `operation` label's slots. Sends 220 operations with fresh random names (more than
 * the 200 slots) from an anonymous client, then 220 with tokens the backends reject, then one
 * with a real credential; reads the gateway's own /metrics before and after each.
 *
 * Meant for `npm run attacks` (scripts/replay-attacks.ts) against the demo: the real credential
 * defaults to the demo's management token for nomad-east, which `npm start` prints.
 */
import { randomBytes } from 'node:crypto';

/** Names sent per flood: more than the gateway keeps as labels (200). */
const FLOOD = 220;
/** Requests in flight at once: well under the per-caller limit (64). */
const PARALLEL = 8;

export interface MetricLabelsOptions {
  /** Headers of a caller a backend accepts. @default the demo's nomad-east management token */
  credential?: Record<string, string>;
  /** Headers of a caller every backend rejects. @default junk `X-Nomad-Token` and `X-Auth-Token` */
  rejected?: Record<string, string>;
}

interface Series {
  /** Sample lines of the operation metrics (counter and histogram). */
  lines: number;
  /** Distinct `operation` label values. */
  names: Set<string>;
}

/**
 * Replays R12 against the gateway at `base` (`http://host:port`, with or without `/graphql`) and
 * returns the rows of a Markdown table (header first), ready to print.
 */
export async function replayMetricLabels(base: string, o: MetricLabelsOptions = {}): Promise<string[]> {
  const root = base.replace(/\/+$/, '').replace(/\/graphql$/, '');
  const credential = o.credential ?? { 'x-nomad-token-nomad-east': 'demo-east-management' };
  const rejected = o.rejected ?? { 'x-nomad-token': 'r12-junk-token', 'x-auth-token': 'r12-junk-token' };
  const list = (name: string): string =>
    JSON.stringify({ query: `query ${name} { volumes(first: 1) { nodes { id } } }` });
  const post = async (body: string, headers: Record<string, string>): Promise<number> => {
    const res = await fetch(`${root}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(60_000),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const series = async (): Promise<Series> => {
    const text = await (await fetch(`${root}/metrics`)).text();
    const lines = text.split('\n').filter((l) => l.startsWith('gateway_graphql_operation'));
    return {
      lines: lines.length,
      names: new Set(lines.map((l) => /operation="([^"]*)"/.exec(l)?.[1]).filter((n): n is string => n !== undefined)),
    };
  };
  const fresh = (): string => `R12_${randomBytes(6).toString('hex')}`;
  const flood = async (
    headers: Record<string, string>,
  ): Promise<{ names: string[]; statuses: Record<number, number> }> => {
    const names = Array.from({ length: FLOOD }, fresh);
    const statuses: Record<number, number> = {};
    for (let i = 0; i < names.length; i += PARALLEL) {
      for (const s of await Promise.all(names.slice(i, i + PARALLEL).map((n) => post(list(n), headers).catch(() => 0))))
        statuses[s] = (statuses[s] ?? 0) + 1;
    }
    return { names, statuses };
  };
  const row = (attack: string, before: Series, after: Series, labelled: string): string =>
    `| ${attack} | ${before.lines} | ${after.lines} | ${[...after.names].filter((n) => !before.names.has(n)).length} | ${labelled} |`;

  // One unlabelled request of each kind first: the `other` series it creates are not the attack's.
  await post(list('R12WarmUp'), {});
  await post(list('R12WarmUp'), rejected);
  const rows = [
    '| R12 attack | operation series before | after | new label names | labelled |',
    '|---|---|---|---|---|',
  ];
  for (const [attack, headers] of [
    [`${FLOOD} random operation names, anonymous`, {}],
    [`${FLOOD} random operation names, rejected tokens`, rejected],
  ] as const) {
    const before = await series();
    const sent = await flood(headers);
    const after = await series();
    const kept = sent.names.filter((n) => after.names.has(n)).length;
    rows.push(row(`${attack} (HTTP ${JSON.stringify(sent.statuses)})`, before, after, `${kept} of ${FLOOD}`));
  }
  const name = fresh();
  const before = await series();
  const status = await post(list(name), credential);
  const after = await series();
  rows.push(
    row(`then one real caller, a new name (HTTP ${status})`, before, after, after.names.has(name) ? 'yes' : 'no'),
  );
  return rows;
}
