/** Breaker and readiness settings (docs/configuration.md "Circuit breakers", "Readiness"): defaults, env over file, bad values named. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';

const NOMAD = { GATEWAY_BACKENDS: 'east=nomad@http://127.0.0.1:4646' };

function file(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'vg-resilience-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('resilience settings', () => {
  it('should default to 5 failures, 50 % of 10 calls in 30 s, 5 s open (doubling to 60 s when flapping), a 5 s list deadline, READINESS_REQUIRE=none and a 2 s probe deadline', () => {
    expect(loadConfig(NOMAD).resilience).toEqual({
      breaker: {
        failures: 5,
        failureRatePercent: 50,
        minCalls: 10,
        windowMs: 30_000,
        openMs: 5_000,
        maxOpenMs: 60_000,
      },
      listBackendDeadlineMs: 5_000,
      readiness: { require: 'none', probeIntervalMs: 5_000, probeTimeoutMs: 2_000 },
    });
  });

  it('should read the environment over the file', () => {
    const path = file({
      breaker: { failures: 3, openMs: 1000, listBackendDeadlineMs: 2000 },
      readiness: { require: 'any', probeIntervalMs: 1000 },
    });
    const c = loadConfig({ ...NOMAD, BREAKER_FAILURES: '7', READINESS_REQUIRE: 'all' }, path).resilience;
    expect(c).toMatchObject({
      breaker: { failures: 7, openMs: 1000 },
      listBackendDeadlineMs: 2000,
      readiness: { require: 'all', probeIntervalMs: 1000 },
    });
  });

  it.each([
    [{ READINESS_REQUIRE: 'some' }, 'READINESS_REQUIRE'],
    [{ BREAKER_FAILURE_RATE_PERCENT: '120' }, 'BREAKER_FAILURE_RATE_PERCENT'],
    [{ BREAKER_OPEN_MS: '10000', BREAKER_MAX_OPEN_MS: '5000' }, 'BREAKER_MAX_OPEN_MS'],
    [{ READINESS_PROBE_INTERVAL_MS: '0' }, 'READINESS_PROBE_INTERVAL_MS'],
  ])('should refuse %j naming %s', (env, setting) => {
    let err: unknown;
    try {
      loadConfig({ ...NOMAD, ...env });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(setting);
  });

  it('should refuse unknown keys in the file groups', () => {
    expect(() => loadConfig(NOMAD, file({ breaker: { failurs: 3 } }))).toThrow(
      /breaker\.failurs: is not a known key .*closest known: breaker\.failures/,
    );
    expect(() => loadConfig(NOMAD, file({ readiness: { requires: 'all' } }))).toThrow(
      /readiness\.requires: is not a known key .*closest known: readiness\.require/,
    );
  });
});
