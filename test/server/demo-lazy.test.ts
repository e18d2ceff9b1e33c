/**
 * Demo mode is loaded only when it runs: a configured gateway (here a memory backend) never loads
 * a simulator module, the demo's or any other. The gateway runs as its own process; a preloaded
 * script reports at exit which loaded modules lie under simulators/.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from '../support/gateway-process';
import { until } from '../support/until';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'demo-lazy-'));
const hook = join(work, 'report-simulators.cjs');
writeFileSync(
  hook,
  `process.on('exit', () => process.stderr.write('simulator modules: ' + JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('${join(root, 'simulators')}'))) + '\\n'));\n`,
);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Starts server/main.ts with `env`, waits for it to serve, stops it, and returns the simulator modules it had loaded. */
async function simulatorModulesLoaded(env: Record<string, string>): Promise<string[]> {
  const gateway = startGatewayProcess({ LOG_LEVEL: 'warn', ...env }, { nodeArgs: ['--require', hook] });
  const { child } = gateway;
  try {
    await until(() => /ready at /.test(gateway.output()) || child.exitCode !== null, 'the gateway to serve', 60_000);
    expect({ exitCode: child.exitCode, err: child.exitCode === null ? '' : gateway.errors() }).toEqual({
      exitCode: null,
      err: '',
    });
  } finally {
    // Waits for 'close': the report is written at exit.
    await gateway.stop();
  }
  const report = /simulator modules: (.*)\n/.exec(gateway.errors());
  expect(report).not.toBeNull();
  return JSON.parse(report![1]!) as string[];
}

describe('demo mode loaded on demand', () => {
  it('should load no simulator module in a configured gateway', async () => {
    expect(await simulatorModulesLoaded({ GATEWAY_BACKENDS: 'lab=memory' })).toEqual([]);
  }, 90_000);

  it('should load the simulators in demo mode (the report sees them)', async () => {
    expect((await simulatorModulesLoaded({})).length).toBeGreaterThan(0);
  }, 90_000);
});
