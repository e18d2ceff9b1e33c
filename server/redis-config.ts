/**
 * The `redis` settings group (env `REDIS_…`, file `redis`): the Redis the replicas share, in one of
 * three forms (docs/scaling.md, "Redis topologies"): a single server (`REDIS_URL`), a primary
 * found through Sentinel (`REDIS_SENTINELS` and `REDIS_SENTINEL_MASTER`), or a Cluster
 * (`REDIS_CLUSTER_NODES`). Its own module, so server/redis.ts takes its type without importing
 * server/config. Passwords are never echoed in errors.
 */
import { existsSync } from 'node:fs';
import { DEFAULT_REDIS_KEY_PREFIX } from '../subscriptions/operations/redis-keys';
import { boolean, ConfigError, integer, readGroup, setting, text, type Rule } from '../adapters/contract/settings';

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

/** One node's address. */
export interface RedisNode {
  host: string;
  port: number;
}

/** `host:port` items, from a comma-separated string or a list (`[v6]:port` for IPv6). */
const nodeList = (defaultPort: number): Rule<RedisNode[]> => ({
  parse(value, setting) {
    const list = typeof value === 'string' ? value.split(',') : value;
    if (!Array.isArray(list) || list.length === 0)
      throw new ConfigError(setting, 'must be a list of host:port (or a comma-separated string)');
    return list.map((item: unknown) => {
      const t = typeof item === 'string' ? item.trim() : '';
      const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(t);
      const port = m?.[3] === undefined ? defaultPort : Number(m[3]);
      if (!m || port < 1 || port > 65535)
        throw new ConfigError(setting, `${JSON.stringify(item)} is not host:port, e.g. redis-0.redis:${defaultPort}`);
      return { host: (m[1] ?? m[2])!, port };
    });
  },
  schema: {
    anyOf: [
      { type: 'array', items: { type: 'string', minLength: 1 } },
      { type: 'string', minLength: 1 },
    ],
  },
});

const secret = (what: string): Rule<string> => {
  const t = text();
  return {
    parse: (v, s) => {
      if (typeof v !== 'string' || v.length === 0) throw new ConfigError(s, `must be a non-empty string (${what})`);
      return t.parse(v, s);
    },
    schema: t.schema,
  };
};

/** The `redis` group. */
export const REDIS_SETTINGS = {
  url: setting({
    env: 'REDIS_URL',
    rule: redisUrl,
    doc: 'A single server: `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). May carry a password, so it is never logged or echoed in errors. One of `url`, `sentinels` or `clusterNodes`; none: operation records and the live path stay in this process.',
  }),
  sentinels: setting({
    env: 'REDIS_SENTINELS',
    rule: nodeList(26379),
    doc: 'Sentinel: the sentinels as `host[:port]` (port 26379 by default), comma-separated or a list; the gateway asks them for the primary of `sentinelMaster` and follows a failover.',
  }),
  sentinelMaster: setting({
    env: 'REDIS_SENTINEL_MASTER',
    rule: text({ pattern: /^[\x21-\x7e]{1,128}$/, message: 'must be the master name the sentinels monitor' }),
    doc: 'Sentinel: the name the sentinels monitor the primary under (`sentinel monitor <name> …`). Required with `sentinels`.',
  }),
  sentinelUsername: setting({
    env: 'REDIS_SENTINEL_USERNAME',
    rule: text(),
    doc: "Sentinel: the sentinels' own ACL user, when they have one.",
  }),
  sentinelPassword: setting({
    env: 'REDIS_SENTINEL_PASSWORD',
    rule: secret('the sentinels’ password'),
    doc: "Sentinel: the sentinels' own password (`requirepass` in sentinel.conf), when they have one. Never logged.",
  }),
  sentinelTls: setting({
    env: 'REDIS_SENTINEL_TLS',
    rule: boolean(),
    default: false,
    doc: 'Sentinel: talk TLS to the sentinels (with `tlsCaFile` when given).',
  }),
  clusterNodes: setting({
    env: 'REDIS_CLUSTER_NODES',
    rule: nodeList(6379),
    doc: 'Cluster: seed nodes as `host[:port]` (port 6379 by default), comma-separated or a list; the gateway learns the rest of the Cluster from them and follows MOVED/ASK redirections.',
  }),
  username: setting({
    env: 'REDIS_USERNAME',
    rule: text(),
    doc: 'ACL user of the data nodes (the Sentinel primary and replicas, or the Cluster nodes). With `url`, give it in the URL instead.',
  }),
  password: setting({
    env: 'REDIS_PASSWORD',
    rule: secret('the data nodes’ password'),
    doc: 'Password of the data nodes (the Sentinel primary and replicas, or the Cluster nodes). Never logged. With `url`, give it in the URL instead.',
  }),
  tls: setting({
    env: 'REDIS_TLS',
    rule: boolean(),
    default: false,
    doc: 'Talk TLS to the data nodes (Sentinel or Cluster). With `url`, use `rediss://` instead.',
  }),
  tlsCaFile: setting({
    env: 'REDIS_TLS_CA_FILE',
    rule: text(),
    doc: "PEM file of the CA that signed Redis's (and the sentinels') certificates; none: the system's CAs.",
  }),
  db: setting({
    env: 'REDIS_DB',
    rule: integer(0, 15),
    doc: 'Database number on a Sentinel primary (Cluster has only database 0). With `url`, give it in the URL path.',
  }),
  keyPrefix: setting({
    env: 'REDIS_KEY_PREFIX',
    rule: text({
      pattern: /^[\x21-\x7a\x7c\x7e]{1,64}$/,
      message: 'must be 1-64 printable characters without spaces or braces (braces would break the hash tags)',
    }),
    default: DEFAULT_REDIS_KEY_PREFIX,
    doc: 'Prefix of every key the gateway writes; replicas sharing records use the same one. No braces: the keys carry their own hash tags.',
  }),
} as const;

/** A Sentinel deployment: where the sentinels are and what they call the primary. */
export interface RedisSentinelConfig {
  sentinels: RedisNode[];
  masterName: string;
  username?: string;
  password?: string;
  tls: boolean;
}

/** The Redis shared by the replicas (file key `redis`); each key's meaning and default are in {@link REDIS_SETTINGS}. Exactly one of `url`, `sentinel` and `clusterNodes`. */
export interface RedisConfig {
  url?: string;
  sentinel?: RedisSentinelConfig;
  clusterNodes?: RedisNode[];
  /** The data nodes' credentials and TLS (Sentinel and Cluster; a URL carries its own). */
  username?: string;
  password?: string;
  /** @default false */
  tls?: boolean;
  tlsCaFile?: string;
  db?: number;
  keyPrefix: string;
}

/** The `redis` group; undefined when no form is given. @throws ConfigError naming the setting */
export function loadRedisConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): RedisConfig | undefined {
  const v = readGroup(REDIS_SETTINGS, { env, file: file.redis, path: 'redis', strict: true });
  const named = (k: keyof typeof REDIS_SETTINGS): string =>
    env[REDIS_SETTINGS[k].env!] !== undefined ? REDIS_SETTINGS[k].env! : `redis.${k}`;
  const forms = (['url', 'sentinels', 'clusterNodes'] as const).filter((k) => v[k] !== undefined);
  if (forms.length === 0) {
    if (file.redis !== undefined && file.redis !== null)
      throw new ConfigError('redis.url', 'is missing (or redis.sentinels, or redis.clusterNodes)');
    const stray = (Object.keys(REDIS_SETTINGS) as Array<keyof typeof REDIS_SETTINGS>).find(
      (k) => k !== 'keyPrefix' && env[REDIS_SETTINGS[k].env!] !== undefined,
    );
    if (stray)
      throw new ConfigError(REDIS_SETTINGS[stray].env!, 'needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES');
    return undefined;
  }
  if (forms.length > 1)
    throw new ConfigError(
      named(forms[1]!),
      `conflicts with ${named(forms[0]!)}: give one Redis (a URL, sentinels or cluster nodes)`,
    );
  const only = (keys: Array<keyof typeof REDIS_SETTINGS>, why: string): void => {
    const k = keys.find((x) => v[x] !== undefined && v[x] !== false);
    if (k) throw new ConfigError(named(k), why);
  };
  if (v.tlsCaFile !== undefined && !existsSync(v.tlsCaFile))
    throw new ConfigError(named('tlsCaFile'), `names no readable file (${v.tlsCaFile})`);
  const common = {
    ...(v.username !== undefined ? { username: v.username } : {}),
    ...(v.password !== undefined ? { password: v.password } : {}),
    ...(v.tlsCaFile !== undefined ? { tlsCaFile: v.tlsCaFile } : {}),
    ...(v.tls ? { tls: true } : {}),
    keyPrefix: v.keyPrefix,
  };
  const sentinelKeys = ['sentinelMaster', 'sentinelUsername', 'sentinelPassword', 'sentinelTls'] as const;
  if (v.url !== undefined) {
    only(
      ['username', 'password', 'tls', 'db'],
      'is given in REDIS_URL for a single server (user, password, rediss://, /db)',
    );
    only([...sentinelKeys], 'is for Sentinel (REDIS_SENTINELS), not a single server');
    return { url: v.url, ...common };
  }
  if (v.clusterNodes !== undefined) {
    only([...sentinelKeys], 'is for Sentinel (REDIS_SENTINELS), not a Cluster');
    only(['db'], 'must not be set for a Cluster: a Cluster has only database 0');
    return { clusterNodes: v.clusterNodes, ...common };
  }
  if (v.sentinelMaster === undefined)
    throw new ConfigError(
      env.REDIS_SENTINELS !== undefined ? 'REDIS_SENTINEL_MASTER' : 'redis.sentinelMaster',
      'is required with sentinels: the name they monitor the primary under',
    );
  return {
    sentinel: {
      sentinels: v.sentinels!,
      masterName: v.sentinelMaster,
      ...(v.sentinelUsername !== undefined ? { username: v.sentinelUsername } : {}),
      ...(v.sentinelPassword !== undefined ? { password: v.sentinelPassword } : {}),
      tls: v.sentinelTls,
    },
    ...(v.db !== undefined ? { db: v.db } : {}),
    ...common,
  };
}
