/**
 * Log lines for people and for pipelines (issue 31, part 5; docs/configuration.md, `LOG_FORMAT`):
 * `LOG_FORMAT=pretty` and demo mode write human-readable lines (pino-pretty, in the gateway's
 * thread), a configured gateway whose stdout is no terminal writes JSON as before. Pretty lines go
 * through the same bounded stdout buffer: with the reader stalled they are dropped and counted
 * past `LOG_MAX_BUFFER_BYTES`, and written once it reads again. Credentials are redacted in both.
 * Three gateways, as child processes whose stdout is a pipe.
 */
import { startGatewayProcess } from '../support/gateway-process';
import { askTypename, droppedLines, stallUntilDropped } from '../support/log-stall';
import { until } from '../support/until';
import { chooseLogFormat, createLogger } from '../../server/logger';
import { CREDENTIAL_HEADERS } from '../../server/credentials';

/** A pretty line: local time, level, message, then the record's other fields. */
const PRETTY = /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] (INFO|WARN|ERROR|DEBUG): /;
/** Lines of `out` that are JSON objects. */
const jsonLines = (out: string): string[] => out.split('\n').filter((l) => l.startsWith('{'));

const NO_LIMITS = { RATE_LIMIT_CALLER_RPS: '0', RATE_LIMIT_ADDRESS_RPS: '0' };
// Started together: the three take their start-up time at once.
const pretty = startGatewayProcess({
  GATEWAY_BACKENDS: 'lab=memory',
  LOG_FORMAT: 'pretty',
  LOG_MAX_BUFFER_BYTES: '65536',
  ...NO_LIMITS,
});
const demo = startGatewayProcess({ DEMO_ACTIVITY: '0' });
const json = startGatewayProcess({ GATEWAY_BACKENDS: 'lab=memory' });
const urls: Record<'pretty' | 'demo' | 'json', string> = { pretty: '', demo: '', json: '' };

beforeAll(async () => {
  [urls.pretty, urls.demo, urls.json] = await Promise.all([pretty.serving(), demo.serving(), json.serving()]);
}, 90_000);

afterAll(async () => {
  pretty.child.stdout.resume();
  await Promise.all([pretty.stop(), demo.stop(), json.stop()]);
}, 60_000);

describe('log format', () => {
  it('should write human-readable lines, not JSON, with LOG_FORMAT=pretty (no colors: stdout is a pipe)', async () => {
    await askTypename(urls.pretty, 'PrettyLine');
    await until(() => pretty.output().includes('PrettyLine'), 'the request line', 10_000);
    const line = pretty
      .output()
      .split('\n')
      .find((l) => l.includes('PrettyLine'))!;
    expect(line).toMatch(PRETTY);
    expect(line).toMatch(/INFO: graphql request .*"operation":"PrettyLine"/);
    expect(pretty.output()).toMatch(/INFO: gateway started /);
    expect(jsonLines(pretty.output())).toEqual([]);
    expect(pretty.output()).not.toContain('\u001b[');
  });

  it('should write human-readable lines in demo mode without being told', async () => {
    await askTypename(urls.demo, 'DemoLine');
    await until(() => demo.output().includes('DemoLine'), 'the request line', 10_000);
    expect(demo.output()).toMatch(/^\[[\d:.]+\] INFO: gateway started /m);
    expect(
      demo
        .output()
        .split('\n')
        .find((l) => l.includes('DemoLine')),
    ).toMatch(PRETTY);
    expect(jsonLines(demo.output())).toEqual([]);
  });

  it('should write JSON lines, as before, for a configured gateway whose stdout is not a terminal', async () => {
    await askTypename(urls.json, 'JsonLine');
    await until(() => json.output().includes('JsonLine'), 'the request line', 10_000);
    const records = jsonLines(json.output()).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.find((r) => r.operation === 'JsonLine')).toMatchObject({ msg: 'graphql request', level: 30 });
    expect(records.map((r) => r.msg)).toContain('gateway started');
    expect(json.output()).not.toMatch(/^\[[\d:.]+\] INFO/m);
  });

  it('should hold pretty lines within LOG_MAX_BUFFER_BYTES while stdout is not read, and write them once it is', async () => {
    const base = urls.pretty.replace(/\/graphql$/, '');
    expect(await droppedLines(base)).toBe(0);
    pretty.child.stdout.pause();
    await stallUntilDropped(urls.pretty, 'PrettyStall', 0);
    expect(await droppedLines(base)).toBeGreaterThan(0);
    pretty.child.stdout.resume();
    await until(() => pretty.output().includes('"operation":"PrettyStall"'), 'the held lines to be written', 30_000);
    const held = pretty
      .output()
      .split('\n')
      .filter((l) => l.includes('PrettyStall'));
    for (const l of held) expect(l).toMatch(PRETTY);
  }, 120_000);
});

describe('pretty lines and secrets', () => {
  it('should redact tokens and credential headers before pino-pretty formats the record', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(l) }, 'pretty');
    const secret = 's3cret-token-value';
    logger.info(
      {
        token: secret,
        backend: { token: secret },
        headers: {
          authorization: `Bearer ${secret}`,
          ...Object.fromEntries(CREDENTIAL_HEADERS.map((h) => [h, secret])),
        },
      },
      'a record with secrets',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(PRETTY);
    expect(lines[0]).toContain('a record with secrets');
    expect(lines[0]).toContain('[REDACTED]');
    expect(lines[0]).not.toContain(secret);
  });

  it('should choose pretty on a terminal or in demo mode, JSON otherwise, LOG_FORMAT winning', () => {
    expect(chooseLogFormat(undefined, { tty: true, demo: false })).toBe('pretty');
    expect(chooseLogFormat(undefined, { tty: false, demo: true })).toBe('pretty');
    expect(chooseLogFormat(undefined, { tty: false, demo: false })).toBe('json');
    expect(chooseLogFormat('json', { tty: true, demo: true })).toBe('json');
    expect(chooseLogFormat('pretty', { tty: false, demo: false })).toBe('pretty');
  });
});
