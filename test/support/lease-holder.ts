/**
 * A child process that contends for one watcher lease and, while it holds it, appends through a
 * fenced script every 20 ms, as a watcher writing the event log would: for the test that pauses a
 * holder (SIGSTOP) past its TTL. It prints one line per fact, in order:
 * `gained <token>`, `lost <token> <reason>`, `try <token>` when an append is sent and
 * `append <token> ok|fenced` when it is answered.
 *
 * Env: REDIS_URL, LEASE_BACKEND, LEASE_REPLICA, LEASE_TTL_MS, LEASE_KEY_PREFIX, APPENDS_KEY (a list key
 * in `{live}`).
 */
import { Redis } from 'ioredis';
import { WatcherLeases } from '../../subscriptions/leases';

/** The fence the event log's append script applies: write only while the lease key holds the token. */
export const FENCED_APPEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 0
`;

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

function main(): void {
  const backend = env('LEASE_BACKEND');
  const appendsKey = env('APPENDS_KEY');
  const client = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1, commandTimeout: 1000 });
  client.on('error', () => {});
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const leases = new WatcherLeases({
    client,
    keyPrefix: env('LEASE_KEY_PREFIX'),
    replicaId: env('LEASE_REPLICA'),
    ttlMs: Number(env('LEASE_TTL_MS')),
    onChange: (_b, held, { token, reason }) => say(held ? `gained ${token}` : `lost ${token} ${reason}`),
  });
  leases.contend([backend]);
  let busy = false;
  setInterval(() => {
    if (busy) return;
    const fence = leases.fence(backend);
    if (!fence) return;
    busy = true;
    say(`try ${fence.token}`);
    client
      .eval(FENCED_APPEND, 2, fence.key, appendsKey, fence.token)
      .then((n) => say(`append ${fence.token} ${n === 0 ? 'fenced' : 'ok'}`))
      .catch((err: unknown) => say(`append ${fence.token} error ${String(err)}`))
      .finally(() => (busy = false));
  }, 20);
  process.once('SIGTERM', () => void leases.release().then(() => process.exit(0)));
}

if (require.main === module) main();
