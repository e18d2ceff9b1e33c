/**
 * The `redis` settings (server/redis-config.ts): a single server, Sentinel or Cluster, one at a time;
 * what each refuses, naming the setting, without echoing a password.
 */
import { ConfigError } from '../../adapters/contract/settings';
import { loadConfig } from '../../server/config';
import { redactRedisUrl } from '../../server/redis';

describe('Redis configuration', () => {
  it('should read REDIS_URL and the file key redis, with the environment winning', () => {
    expect(loadConfig({}).redis).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://:pw@cache:6380/2' }).redis).toEqual({
      url: 'redis://:pw@cache:6380/2',
      keyPrefix: 'vg:',
    });
    expect(loadConfig({ REDIS_URL: 'rediss://cache', REDIS_KEY_PREFIX: 'gw1:' }).redis).toEqual({
      url: 'rediss://cache',
      keyPrefix: 'gw1:',
    });
  });

  it.each([
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://cache:6379/db' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://cache', REDIS_KEY_PREFIX: 'has space' }, 'REDIS_KEY_PREFIX'],
  ])('should refuse %j naming %s', (env, setting) => {
    try {
      loadConfig(env);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe(setting);
    }
  });

  it("should read a Sentinel form and a Cluster form, with the data nodes' auth and TLS", () => {
    expect(
      loadConfig({
        REDIS_SENTINELS: 's1:26379, s2, [::1]:26380',
        REDIS_SENTINEL_MASTER: 'gateway',
        REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
        REDIS_PASSWORD: 'data-pw',
        REDIS_DB: '3',
      }).redis,
    ).toEqual({
      sentinel: {
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        masterName: 'gateway',
        password: 'sentinel-pw',
        tls: false,
      },
      password: 'data-pw',
      db: 3,
      keyPrefix: 'vg:',
    });
    expect(
      loadConfig({ REDIS_CLUSTER_NODES: 'c1:7000,c2:7001', REDIS_TLS: 'true', REDIS_USERNAME: 'gw' }).redis,
    ).toEqual({
      clusterNodes: [
        { host: 'c1', port: 7000 },
        { host: 'c2', port: 7001 },
      ],
      username: 'gw',
      tls: true,
      keyPrefix: 'vg:',
    });
  });

  it.each([
    [{ REDIS_URL: 'redis://cache', REDIS_CLUSTER_NODES: 'c1:7000' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_SENTINELS: 's1' }, 'REDIS_SENTINEL_MASTER'],
    [{ REDIS_SENTINELS: 's1:99999', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINELS'],
    [{ REDIS_URL: 'redis://cache', REDIS_PASSWORD: 'x' }, 'REDIS_PASSWORD'],
    [{ REDIS_URL: 'redis://cache', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINEL_MASTER'],
    [{ REDIS_CLUSTER_NODES: 'c1', REDIS_DB: '2' }, 'REDIS_DB'],
    [{ REDIS_CLUSTER_NODES: 'c1', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }, 'REDIS_TLS_CA_FILE'],
    [{ REDIS_PASSWORD: 'x' }, 'REDIS_PASSWORD'],
    [{ REDIS_URL: 'redis://cache', REDIS_KEY_PREFIX: '{vg}:' }, 'REDIS_KEY_PREFIX'],
  ])('should refuse %j naming %s', (env, setting) => {
    try {
      loadConfig(env);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe(setting);
      expect((err as Error).message).not.toMatch(/data-pw|\bx\b.*password/);
    }
  });

  it('should never echo a Redis password', () => {
    try {
      loadConfig({ REDIS_URL: 'redis://:hunter2-secret@cache:6379/nodb' });
      throw new Error('accepted');
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2-secret');
    }
    expect(redactRedisUrl('redis://user:hunter2-secret@cache:6379/1')).toBe('redis://***@cache:6379/1');
  });
});
