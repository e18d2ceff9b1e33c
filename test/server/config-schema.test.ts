/**
 * Issue 18, item 7: one config definition. The readers, the unknown-name check and the config
 * file's JSON Schema (config.schema.json) all come from it: every declared setting is refused
 * out of its rule by its variable and by its file key, the committed schema is the generated one
 * and accepts the documented examples, and docs/configuration.md lists every setting.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingLeaves, type JsonSchema, type Setting, ConfigError } from '../../adapters/contract/settings';
import { BACKEND_MODULES } from '../../server/kinds';
import { loadConfig } from '../../server/config';
import { BACKEND_ENV_PREFIX, backendSettings, GATEWAY_SETTINGS } from '../../server/config-definition';
import { CONFIG_SCHEMA_PATH, configSchema, configSchemaText } from '../../server/config-schema';
import { demoActivityFromEnv } from '../../server/demo-activity';

const root = join(__dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');

/** The errors of `value` against the subset of JSON Schema the generator writes (empty: valid). */
function validate(schema: JsonSchema, value: unknown, at = '$'): string[] {
  const errs: string[] = [];
  const isObj = typeof value === 'object' && value !== null && !Array.isArray(value);
  const typeOk: Record<string, boolean> = {
    object: isObj,
    array: Array.isArray(value),
    string: typeof value === 'string',
    integer: Number.isInteger(value),
    number: typeof value === 'number',
    boolean: typeof value === 'boolean',
  };
  if (schema.type && !typeOk[schema.type]) return [`${at}: not ${schema.type}`];
  if (schema.const !== undefined && value !== schema.const) errs.push(`${at}: not ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) errs.push(`${at}: not one of ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errs.push(`${at}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errs.push(`${at}: above ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) errs.push(`${at}: too short`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      errs.push(`${at}: does not match ${schema.pattern}`);
  }
  if (isObj) {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in obj)) errs.push(`${at}.${key}: required`);
    for (const [key, v] of Object.entries(obj)) {
      const sub = schema.properties?.[key];
      if (sub) errs.push(...validate(sub, v, `${at}.${key}`));
      else if (schema.additionalProperties === false) errs.push(`${at}.${key}: not allowed`);
    }
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => errs.push(...validate(schema.items!, v, `${at}[${i}]`)));
  if (schema.oneOf && schema.oneOf.filter((s) => validate(s, value, at).length === 0).length !== 1)
    errs.push(`${at}: not exactly one of ${schema.oneOf.length} shapes`);
  if (schema.anyOf && !schema.anyOf.some((s) => validate(s, value, at).length === 0))
    errs.push(`${at}: none of ${schema.anyOf.length} shapes`);
  return errs;
}

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-schema-')), 'gateway.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** The setting a read refuses, or undefined when it reads. */
function refused(read: () => unknown): string | undefined {
  try {
    read();
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.setting;
    throw err;
  }
}

/** A value its rule refuses, as a variable would hold it; undefined for a rule that takes any non-empty string. */
function badValue(s: Setting<unknown>): string | undefined {
  const r = s.rule.schema;
  if (r.type === 'integer' || r.type === 'number') return String(r.maximum! + 1);
  if (r.enum) return 'not-one-of-them';
  if (r.type === 'boolean') return 'maybe';
  if (r.anyOf) return 'not an origin';
  if (r.type === 'string' && r.pattern) return 'not valid';
  return undefined;
}

/** A file value its rule refuses (numbers as numbers). */
const badFileValue = (s: Setting<unknown>): unknown =>
  s.rule.schema.type === 'integer' || s.rule.schema.type === 'number' ? s.rule.schema.maximum! + 1 : badValue(s);

/** `{ a: { b: value } }` for the path `a.b`. */
const nest = (path: string, value: unknown): Record<string, unknown> =>
  path.split('.').reduceRight<unknown>((v, k) => ({ [k]: v }), value) as Record<string, unknown>;

const gatewayLeaves = settingLeaves(GATEWAY_SETTINGS);
const checkable = gatewayLeaves.filter(({ setting }) => badValue(setting) !== undefined);
/** Every backend setting, per module, with a backend of that kind configured. */
const backendLeaves = BACKEND_MODULES.flatMap((m) =>
  settingLeaves(backendSettings(m))
    .filter(({ path, setting }) => badValue(setting) !== undefined && !['id', 'kind', 'url'].includes(path))
    .map(({ path, setting }) => ({ kind: m.kind, url: m.needsUrl ? 'http://127.0.0.1:1' : undefined, path, setting })),
);

describe('the config definition drives the readers', () => {
  it('should declare checkable settings in every section and for every backend kind', () => {
    expect(checkable.length).toBeGreaterThan(60);
    expect(new Set(backendLeaves.map((l) => l.kind))).toEqual(new Set(BACKEND_MODULES.map((m) => m.kind)));
  });

  it.each(
    checkable
      .filter(({ setting }) => setting.env !== undefined)
      .map(({ path, setting }) => [setting.env!, path, setting] as const),
  )('should refuse %s out of its rule, naming the variable (%s)', (env, _path, setting) => {
    const vars = { GATEWAY_BACKENDS: 'lab=memory', [env]: badValue(setting)! };
    // Demo mode's variables are read when the demo starts.
    expect(refused(() => (loadConfig(vars), demoActivityFromEnv(vars)))).toBe(env);
  });

  it.each(checkable.filter(({ setting }) => setting.file).map(({ path, setting }) => [path, setting] as const))(
    'should refuse the file key %s out of its rule, naming it',
    (path, setting) => {
      expect(
        refused(() => loadConfig({ GATEWAY_BACKENDS: 'lab=memory' }, file(nest(path, badFileValue(setting))))),
      ).toBe(path);
    },
  );

  it.each(
    backendLeaves
      .filter(({ setting }) => setting.env !== undefined)
      .map((l) => [l.kind, `${BACKEND_ENV_PREFIX}${l.setting.env}`, l] as const),
  )("should refuse a %s backend's %s out of its rule, naming its key", (kind, _env, { url, path, setting }) => {
    const env = {
      GATEWAY_BACKENDS: `lab=${kind}${url ? `@${url}` : ''}`,
      [`GATEWAY_BACKEND_LAB_${setting.env}`]: badValue(setting)!,
    };
    expect(refused(() => loadConfig(env))).toBe(`backends[0].${path}`);
  });

  it.each(backendLeaves.map((l) => [l.kind, l.path, l] as const))(
    "should refuse a %s backend's file key %s out of its rule, naming it",
    (kind, path, { url, setting }) => {
      const entry = { id: 'lab', kind, ...(url ? { url } : {}), ...nest(path, badFileValue(setting)) };
      expect(refused(() => loadConfig({}, file({ backends: [entry] })))).toBe(`backends[0].${path}`);
    },
  );

  it('should read every default the definition declares', () => {
    const c = loadConfig({ GATEWAY_BACKENDS: 'lab=memory' });
    expect(c).toMatchObject({
      port: GATEWAY_SETTINGS.port.default,
      logLevel: GATEWAY_SETTINGS.logLevel.default,
      maxConcurrentReads: GATEWAY_SETTINGS.maxConcurrentReads.default,
    });
    for (const [group, read] of [
      ['ws', c.ws],
      ['live', c.live],
    ] as const) {
      for (const { path, setting } of settingLeaves(GATEWAY_SETTINGS[group]))
        expect({ path, value: (read as Record<string, unknown>)[path] }).toEqual({ path, value: setting.default });
    }
  });
});

describe("the config file's JSON Schema", () => {
  const committed = JSON.parse(readFileSync(join(root, CONFIG_SCHEMA_PATH), 'utf8')) as JsonSchema;

  it('should be committed as generated (npm run config:schema)', () => {
    expect(readFileSync(join(root, CONFIG_SCHEMA_PATH), 'utf8')).toBe(configSchemaText());
  });

  it('should have a property with a description for every file setting of the definition', () => {
    for (const { path, setting } of gatewayLeaves.filter((l) => l.setting.file)) {
      const at = path.split('.').reduce<JsonSchema | undefined>((s, k) => s?.properties?.[k], committed);
      expect({ path, description: typeof at?.description }).toEqual({ path, description: 'string' });
      expect(at!.description).toContain(setting.doc);
    }
  });

  const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);

  it.each(examples.map((e) => [e.replace(/\s+/g, ' ').slice(0, 60), e]))(
    'should accept the documented example %s, as the gateway does',
    (_, text) => {
      const content = JSON.parse(text) as Record<string, unknown>;
      expect(validate(committed, content)).toEqual([]);
      expect(refused(() => loadConfig({ GATEWAY_BACKENDS: 'lab=memory' }, file(content)))).toBeUndefined();
    },
  );

  it('should find the documented examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });

  it.each([
    [{ prot: 4630 }, '$.prot: not allowed'],
    [{ http: { maxHeaderByte: 1 } }, '$.http.maxHeaderByte: not allowed'],
    [{ limits: { maxDepth: 0 } }, '$.limits.maxDepth: below 1'],
    [{ backends: [{ id: 'a', kind: 'consul', url: 'http://x' }] }, '$.backends[0]: not exactly one of'],
  ])('should refuse %j as the gateway does', (content, error) => {
    expect(validate(configSchema(), content).join('\n')).toContain(error);
    expect(refused(() => loadConfig({}, file(content)))).toBeDefined();
  });

  it.each(BACKEND_MODULES.map((m) => [m.kind, m] as const))(
    'should take a minimal %s entry, its URL required when its kind needs one',
    (kind, m) => {
      const entry = { id: 'lab', kind, url: 'http://127.0.0.1:1' };
      expect(validate(configSchema(), { backends: [entry] })).toEqual([]);
      const { url: _, ...noUrl } = entry;
      expect(validate(configSchema(), { backends: [noUrl] }).length > 0).toBe(m.needsUrl);
    },
  );
});

describe('docs/configuration.md', () => {
  it('should name every file key of the definition', () => {
    const missing = gatewayLeaves
      .filter(({ setting }) => setting.file)
      .filter(({ path }) => !doc.includes(`\`${path}\``));
    expect(missing.map((l) => l.path)).toEqual([]);
  });

  it('should list every backend key and variable of every module in its Backends section', () => {
    const backends = doc.slice(doc.indexOf('## Backends'));
    const leaves = BACKEND_MODULES.flatMap((m) => settingLeaves(backendSettings(m)));
    expect(leaves.filter(({ path }) => !backends.includes(`| \`${path.split('.')[0]}\` |`)).map((l) => l.path)).toEqual(
      [],
    );
    expect(
      leaves.flatMap(({ setting }) =>
        setting.env === undefined || backends.includes(`_${setting.env}\``) ? [] : [setting.env],
      ),
    ).toEqual([]);
  });
});
