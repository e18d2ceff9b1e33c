/** The `ws` settings group: env wins over the file, bad values name the setting. */
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { loadWsConfig, WS_DEFAULTS } from '../../server/ws';

describe('ws configuration', () => {
  it('should default every setting as documented', () => {
    expect(loadWsConfig({}, {})).toEqual({
      allowedOrigins: [],
      maxPayloadBytes: 65_536,
      maxConnectionsPerAddress: 100,
      maxConnections: 10_000,
      maxSubscriptionsPerSocket: 100,
      maxSubscriptionsPerCredential: 500,
      maxBufferedBytes: 1_048_576,
      maxBufferedBytesPerAddress: 8 * 1_048_576,
      keepAliveMs: 30_000,
      connectionInitTimeoutMs: 10_000,
      maxInitPayloadBytes: 16_384,
    });
    expect(loadConfig({}).ws).toEqual(WS_DEFAULTS);
  });

  it('should read the environment over the file', () => {
    const c = loadWsConfig(
      {
        WS_MAX_PAYLOAD_BYTES: '4096',
        WS_ALLOWED_ORIGINS: 'https://a.example.com, https://b.example.com:8443',
        WS_KEEPALIVE_MS: '0',
      },
      { ws: { maxPayloadBytes: 9999, maxSubscriptionsPerSocket: 7, allowedOrigins: ['https://file.example.com'] } },
    );
    expect(c).toMatchObject({
      maxPayloadBytes: 4096,
      maxSubscriptionsPerSocket: 7,
      keepAliveMs: 0,
      allowedOrigins: ['https://a.example.com', 'https://b.example.com:8443'],
    });
  });

  it.each([
    [{ WS_MAX_PAYLOAD_BYTES: '10' }, {}, 'WS_MAX_PAYLOAD_BYTES'],
    [{ WS_MAX_SUBSCRIPTIONS_PER_SOCKET: 'many' }, {}, 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET'],
    [{ WS_ALLOWED_ORIGINS: 'https://a.example.com/path' }, {}, 'WS_ALLOWED_ORIGINS'],
    [{ WS_MAX_BUFFERED_BYTES_PER_ADDRESS: '100' }, {}, 'WS_MAX_BUFFERED_BYTES_PER_ADDRESS'],
    [{}, { ws: { maxConnections: -1 } }, 'ws.maxConnections'],
    [{}, { ws: { maxQueue: 1 } }, 'ws.maxQueue'],
    [{}, { ws: 'yes' }, 'ws'],
  ])('should refuse %j %j naming %s', (env, file, setting) => {
    expect(() => loadWsConfig(env as NodeJS.ProcessEnv, file as Record<string, unknown>)).toThrow(ConfigError);
    try {
      loadWsConfig(env, file);
    } catch (err) {
      expect((err as ConfigError).setting).toBe(setting);
    }
  });
});
