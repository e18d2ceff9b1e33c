/**
 * Gateway replicas on one real Redis for the scale-out tests: each replica a child process
 * (server/main.ts) over the same Nomad simulator, so a test can kill -9, SIGSTOP and SIGCONT it;
 * graphql-ws subscribers that keep every event they receive.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { startGatewayProcess } from '../support/gateway-process';
import { MGMT } from '../support/constants';
import { until } from '../support/until';

/** The gateway's service token on the Nomad simulator (a management token of its own). */
export const SERVICE_TOKEN = 'service-secret';

export type Replica = ReturnType<typeof startGatewayProcess> & { url: string; origin: string; name: string };

/** The environment of a replica over the Nomad simulator at `url` (add {@link SERVICE_TOKEN} to it), backend id east. */
export const nomadBackend = (url: string): Record<string, string> => ({
  GATEWAY_BACKENDS: `east=nomad@${url}`,
  // The watchers' own token, told apart from callers' (MGMT) in the simulator's request log.
  GATEWAY_BACKEND_EAST_TOKEN: SERVICE_TOKEN,
});

/**
 * Starts a replica sharing `redis` (a `redis://` URL, or the environment of another form, e.g.
 * `{ REDIS_CLUSTER_NODES: cluster.seeds }`), over the backends `backends` configures (e.g. {@link nomadBackend}).
 */
export async function startReplica(
  name: string,
  redis: string | Record<string, string>,
  backends: Record<string, string>,
): Promise<Replica> {
  const p = startGatewayProcess({
    ...(typeof redis === 'string' ? { REDIS_URL: redis } : redis),
    REDIS_KEY_PREFIX: 'scale:',
    LIVE_LEASE_TTL_MS: '1500',
    LIVE_SNAPSHOT_EVERY_MS: '500',
    SHUTDOWN_DRAIN_MS: '0',
    RATE_LIMIT_CALLER_RPS: '0',
    RATE_LIMIT_ADDRESS_RPS: '0',
    ...backends,
  });
  const url = (await p.serving()).replace('localhost', '127.0.0.1');
  return { ...p, url, origin: new URL(url).origin, name };
}

/** POST a GraphQL query to a replica with the caller's Nomad token (MGMT unless `headers` say otherwise). */
export async function gql(
  r: Replica,
  query: string,
  headers: Record<string, string> = { 'X-Nomad-Token': MGMT },
  variables: Record<string, unknown> = {},
): Promise<any> {
  const res = await fetch(r.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return res.json();
}

/** The replica's `/readyz` body. */
export async function readyz(r: Replica): Promise<any> {
  return (await fetch(`${r.origin}/readyz`)).json();
}

/** HOLDER or FOLLOWER for backend east, as the replica's `/readyz` says; null when it does not answer. */
export async function role(r: Replica): Promise<string | null> {
  try {
    const body = await readyz(r);
    return (body.replication?.backends?.[0]?.role as string | undefined) ?? null;
  } catch {
    return null;
  }
}

export interface Received {
  type: string;
  volumeId: string | null;
  cursor: string;
  previousStatus?: string | null;
}

/** One volumeChanged subscriber on a replica: what it received, and its end. */
export interface Subscriber {
  events: Received[];
  errors: unknown[];
  completed: boolean;
  /** The non-SUBSCRIBED events, as `type volume-native-id` strings. */
  changes(): Received[];
  dispose(): Promise<void>;
}

/** The native id of a volume's global id. */
export const nativeOf = (id: string | null): string =>
  id ? (JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as string[])[3]! : '';

/** Waits until the replica holds the lease of its one backend and has its view (the watcher's first read compared or loaded). */
export async function holdingWithView(r: Replica, timeoutMs = 45_000): Promise<void> {
  await until(
    async () => (await readyz(r)).replication?.backends?.[0]?.viewComplete === true && (await role(r)) === 'HOLDER',
    `${r.name} to hold the lease and have the view`,
    timeoutMs,
  );
}

/** The native ids of the volumes of `made` whose CREATED the shared log holds, in log order. */
export async function loggedCreates(
  redis: { xrange(key: string, start: string, end: string): Promise<Array<[string, string[]]>> },
  made: readonly string[],
): Promise<string[]> {
  return (await redis.xrange('scale:{live}:events', '-', '+'))
    .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { type: string; volumeId: string })
    .filter((e) => e.type === 'CREATED' && made.includes(nativeOf(e.volumeId)))
    .map((e) => nativeOf(e.volumeId));
}

/** The native ids of the volumes whose CREATED a subscriber received, in the order received. */
export const created = (s: Subscriber): string[] =>
  s
    .changes()
    .filter((e) => e.type === 'CREATED')
    .map((e) => nativeOf(e.volumeId));

/**
 * Waits until every subscriber received a CREATED for each volume of `made`, then expects exactly
 * those, once each, in the order made, and no error.
 */
export async function expectEachCreatedOnce(made: readonly string[], ...subs: Subscriber[]): Promise<void> {
  await until(
    () => subs.every((s) => created(s).length >= made.length),
    () =>
      `every change on every subscriber (${made.length} made; ${subs.map((s) => created(s).length).join(', ')} received)`,
    30_000,
  );
  for (const s of subs) {
    expect(created(s)).toEqual(made);
    expect(s.errors).toEqual([]);
  }
}

const SUB = `subscription($since: String) { volumeChanged(since: $since) { type volumeId cursor previousStatus } }`;

export async function subscribe(
  r: Replica,
  since?: string,
  connectionParams: Record<string, string> = { 'X-Nomad-Token': MGMT },
): Promise<Subscriber> {
  const client: Client = createClient({
    url: r.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
  });
  const s: Subscriber = {
    events: [],
    errors: [],
    completed: false,
    changes: () => s.events.filter((e) => e.type !== 'SUBSCRIBED'),
    dispose: async () => {
      await client.dispose();
    },
  };
  client.subscribe<{ volumeChanged: Received }>(
    { query: SUB, variables: since ? { since } : {} },
    {
      next: (v) => {
        if (v.errors) s.errors.push(v.errors);
        if (v.data?.volumeChanged) s.events.push(v.data.volumeChanged);
      },
      error: (e) => void s.errors.push(e),
      complete: () => void (s.completed = true),
    },
  );
  await until(() => s.events.length > 0 || s.errors.length > 0, `SUBSCRIBED from ${r.name}`, 30_000);
  return s;
}
