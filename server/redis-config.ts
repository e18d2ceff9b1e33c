/**
 * The `redis` settings group (env `REDIS_…`, file `redis`): a Redis server shared by the
 * replicas. Its own module, so server/redis.ts takes its type without importing server/config.
 */
import { DEFAULT_REDIS_KEY_PREFIX } from '../subscriptions/operations/redis-keys';
import { ConfigError, readGroup, setting, text, type Rule } from '../adapters/contract/settings';

/** A Redis URL, checked without ever echoing it (it may carry a password). */
const redisUrl: Rule<string> = {
  parse(value, setting) {
    if (typeof value !== 'string' || value.trim() === '')
      throw new ConfigError(setting, 'must be a URL string, e.g. redis://redis.example.com:6379');
    let u: URL;
    try {
      u = new URL(value.trim());
    } catch {
      throw new ConfigError(
        setting,
        'is not a valid URL (expected redis://[user:password@]host[:port][/db] or rediss://…)',
      );
    }
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
      throw new ConfigError(setting, `must be redis:// or rediss:// (got ${u.protocol})`);
    if (!u.hostname) throw new ConfigError(setting, 'needs a host');
    if (u.pathname !== '' && u.pathname !== '/' && !/^\/\d{1,2}$/.test(u.pathname))
      throw new ConfigError(setting, 'path must be empty or a database number, e.g. /0');
    if (u.search || u.hash) throw new ConfigError(setting, 'must not have a query or fragment');
    return value.trim();
  },
  schema: { type: 'string', pattern: '^rediss?://' },
};

/** The `redis` group. */
export const REDIS_SETTINGS = {
  url: setting({
    env: 'REDIS_URL',
    rule: redisUrl,
    doc: '`redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS); a single server. May carry a password, so it is never logged or echoed in errors. None: operation records stay in this process.',
  }),
  keyPrefix: setting({
    env: 'REDIS_KEY_PREFIX',
    rule: text({ pattern: /^[\x21-\x7e]{1,64}$/, message: 'must be 1-64 printable characters without spaces' }),
    default: DEFAULT_REDIS_KEY_PREFIX,
    doc: 'Prefix of every key the gateway writes; replicas sharing records use the same one.',
  }),
} as const;

/** A Redis server shared by the replicas (file key `redis`); each key's meaning and default are in {@link REDIS_SETTINGS}. */
export interface RedisConfig {
  url: string;
  keyPrefix: string;
}

/** The `redis` group; undefined when no URL is given. @throws ConfigError naming the setting (a `redis` object without a URL: `redis.url`) */
export function loadRedisConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): RedisConfig | undefined {
  const { url, keyPrefix } = readGroup(REDIS_SETTINGS, { env, file: file.redis, path: 'redis', strict: true });
  if (url !== undefined) return { url, keyPrefix };
  if (file.redis !== undefined && file.redis !== null) throw new ConfigError('redis.url', 'is missing');
  return undefined;
}
