/** The watcher's intervals in the backend configuration: defaults, env and file forms, validation. */
import { loadConfig } from '../../server/config';
import type { OpenStackSettings as OpenStackBackendConfig } from '../../adapters/openstack/settings';

const OS = { GATEWAY_BACKENDS: 'os=openstack@https://keystone.example.com:5000/v3' };
const first = (env: NodeJS.ProcessEnv): OpenStackBackendConfig => loadConfig(env).backends[0] as OpenStackBackendConfig;

describe('OpenStack watcher intervals (configuration)', () => {
  it('should default to 500 ms fast and 10 s slow, fast for 30 s per transition', () => {
    expect(first(OS)).toMatchObject({ watchFastMs: 500, watchSlowMs: 10_000, watchTransitionWindowMs: 30_000 });
  });

  it('should read GATEWAY_BACKEND_<ID>_WATCH_TRANSITION_WINDOW_MS', () => {
    expect(first({ ...OS, GATEWAY_BACKEND_OS_WATCH_TRANSITION_WINDOW_MS: '0' })).toMatchObject({
      watchTransitionWindowMs: 0,
    });
    expect(first({ ...OS, GATEWAY_BACKEND_OS_WATCH_TRANSITION_WINDOW_MS: '120000' })).toMatchObject({
      watchTransitionWindowMs: 120_000,
    });
  });

  it('should read GATEWAY_BACKEND_<ID>_WATCH_FAST_MS and _WATCH_SLOW_MS', () => {
    expect(
      first({ ...OS, GATEWAY_BACKEND_OS_WATCH_FAST_MS: '250', GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '5000' }),
    ).toMatchObject({ watchFastMs: 250, watchSlowMs: 5000 });
  });

  it('should keep the slow interval at least the fast one when only the fast one is raised', () => {
    expect(first({ ...OS, GATEWAY_BACKEND_OS_WATCH_FAST_MS: '20000' })).toMatchObject({
      watchFastMs: 20_000,
      watchSlowMs: 20_000,
    });
  });

  it.each([
    [{ GATEWAY_BACKEND_OS_WATCH_FAST_MS: '10' }, 'backends[0].watchFastMs'],
    [{ GATEWAY_BACKEND_OS_WATCH_FAST_MS: 'soon' }, 'backends[0].watchFastMs'],
    [{ GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '0' }, 'backends[0].watchSlowMs'],
    [{ GATEWAY_BACKEND_OS_WATCH_FAST_MS: '2000', GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '1000' }, 'backends[0].watchSlowMs'],
    [{ GATEWAY_BACKEND_OS_WATCH_TRANSITION_WINDOW_MS: '-1' }, 'backends[0].watchTransitionWindowMs'],
    [{ GATEWAY_BACKEND_OS_WATCH_TRANSITION_WINDOW_MS: '3600001' }, 'backends[0].watchTransitionWindowMs'],
  ])('should refuse %j naming %s', (env, setting) => {
    expect(() => loadConfig({ ...OS, ...env })).toThrow(expect.objectContaining({ name: 'ConfigError', setting }));
  });
});
