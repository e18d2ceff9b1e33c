/**
 * Issue 31, part 3: the API schema. `schema/generated/published.graphql` is the subgraph SDL, which
 * applies Federation's directives without defining them, so strict tools refuse it. The API schema
 * (`schema/generated/api.graphql`, served at `GET /graphql/schema.graphql` even with introspection
 * off) is read here by those tools themselves: graphql-js, GraphQL Code Generator (its CLI, from the
 * file and from the URL) and GraphQL Inspector (its core and its CLI), against gateways over HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { CriticalityLevel, diff, validate } from '@graphql-inspector/core';
import { buildSchema, parse, printSchema, Source } from 'graphql';
import { apiSchemaSdl } from '../../server/api-schema';
import { loadConfig } from '../../server/config';
import { buildGatewaySchema } from '../../server/schema';
import { disposeAll, startGatewayFor, type GatewayUnderTest } from '../support/harness';

const ROOT = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const PUBLISHED = read('schema/generated/published.graphql');
const API = read('schema/generated/api.graphql');
const FEDERATION_WORDS =
  /@link|@key|@shareable|@cost|@listSize|_service|_entities|_Any|_Entity|_Service|FieldSet|link__/;

let open: GatewayUnderTest;
let closed: GatewayUnderTest;
let work: string;
const schemaUrl = (g: GatewayUnderTest): string => new URL('/graphql/schema.graphql', g.gateway.url).href;

/** A command of node_modules/.bin run in the repository (not blocking: the gateways under test run in this process). */
const tool = (name: string, args: string[]): Promise<{ status: number; out: string }> =>
  new Promise((resolve) => {
    execFile(join(ROOT, 'node_modules', '.bin', name), args, { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vg-api-schema-'));
  // Introspection off in both, as in production; the second has the schema's path off too.
  open = await startGatewayFor([], { limits: { introspection: false } });
  closed = await startGatewayFor([], { limits: { introspection: false }, http: { schemaSdl: false } });
});
afterAll(async () => {
  await disposeAll();
  rmSync(work, { recursive: true, force: true });
});

describe('the subgraph SDL, for contrast', () => {
  it("should be refused by graphql-js's buildSchema: the reason the API schema exists", () => {
    expect(() => buildSchema(PUBLISHED)).toThrow(/Unknown directive "@link"[\s\S]*Unknown directive "@key"/);
  });
});

describe('schema/generated/api.graphql', () => {
  it('should be accepted by buildSchema, with no Federation directive, type or field', () => {
    const schema = buildSchema(API);
    expect(schema.getQueryType()?.getFields().volumes).toBeDefined();
    expect(schema.getSubscriptionType()?.getFields().volumeChanged).toBeDefined();
    expect(API).not.toMatch(FEDERATION_WORDS);
    expect(schema.getDirectives().map((d) => d.name)).toEqual([
      'include',
      'skip',
      'deprecated',
      'specifiedBy',
      'oneOf',
    ]);
    // Descriptions and deprecations are kept.
    expect(schema.getType('Volume')?.description).toMatch(/\S/);
    expect(API.match(/@deprecated/g)?.length).toBe(PUBLISHED.match(/@deprecated/g)?.length);
  });

  it("should also come out of graphql-js's print of the executable schema, Federation's definitions and all", () => {
    const printed = printSchema(buildGatewaySchema());
    expect(printed).toMatch(/_entities|link__Import|federation__FieldSet/);
    const api = apiSchemaSdl(printed);
    expect(api).not.toMatch(FEDERATION_WORDS);
    expect(Object.keys(buildSchema(api).getTypeMap()).sort()).toEqual(
      Object.keys(buildSchema(API).getTypeMap()).sort(),
    );
  });

  it('should differ from the subgraph schema only by what Federation adds (GraphQL Inspector diff)', async () => {
    const changes = await diff(buildSubgraphSchema({ typeDefs: parse(PUBLISHED) }), buildSchema(API));
    expect(changes.length).toBeGreaterThan(0);
    const federation = (path = ''): boolean =>
      /^(@|_|link__|federation__)/.test(path) || /^Query\._(service|entities)$/.test(path) || /\.@\w+$/.test(path);
    // Every type, field, argument and enum value of the subgraph is in the API schema; only
    // Federation's own definitions and the directive usages are gone.
    expect(changes.filter((c) => !federation(c.path)).map((c) => `${c.type} ${c.path}`)).toEqual([]);
    expect(
      changes
        .filter((c) => c.criticality.level !== CriticalityLevel.Breaking)
        .filter((c) => !c.type.startsWith('DIRECTIVE_USAGE_')),
    ).toEqual([]);
  });

  it("should validate the README's client examples (GraphQL Inspector validate)", () => {
    const readme = read('README.md');
    const all = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m, i) => new Source(m[1]!, `README#${i}`));
    // The Federation section's `_entities` query is what a router sends, not a client.
    const blocks = all.filter((s) => !s.body.includes('_entities'));
    expect({ all: all.length > 5, routers: all.length - blocks.length }).toEqual({ all: true, routers: 1 });
    const invalid = validate(buildSchema(API), blocks).flatMap((r) =>
      r.errors.map((e) => `${r.source.name}: ${e.message}`),
    );
    expect(invalid).toEqual([]);
  });
});

describe('GET /graphql/schema.graphql', () => {
  it('should serve the file, byte for byte, while introspection is refused', async () => {
    const introspection = await open.gql('{ __schema { queryType { name } } }');
    expect(introspection.body.errors?.[0]?.extensions?.code).toBe('INTROSPECTION_DISABLED');
    const res = await fetch(schemaUrl(open));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toBe(API);
  });

  it('should answer HEAD without a body, and a matching If-None-Match with 304', async () => {
    const get = await fetch(schemaUrl(open));
    const etag = get.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const head = await fetch(schemaUrl(open), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(API)));
    expect(head.headers.get('etag')).toBe(etag);
    expect(await head.text()).toBe('');
    const again = await fetch(schemaUrl(open), { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await fetch(schemaUrl(open), { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    // POST as GET (GraphQL Inspector's CLI fetches with POST); anything else is refused.
    expect(await (await fetch(schemaUrl(open), { method: 'POST', body: '{}' })).text()).toBe(API);
    const put = await fetch(schemaUrl(open), { method: 'PUT' });
    expect({ status: put.status, allow: put.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD, POST' });
  });

  it('should be 404 with SCHEMA_SDL=false, and the 404 should not name it', async () => {
    expect(loadConfig({ SCHEMA_SDL: 'false' }).http.schemaSdl).toBe(false);
    expect(loadConfig({}).http.schemaSdl).toBe(true);
    const res = await fetch(schemaUrl(closed));
    expect(res.status).toBe(404);
    expect(JSON.stringify(await res.json())).not.toContain('schema.graphql');
    const notFound = await (await fetch(new URL('/nothing', open.gateway.url))).json();
    expect(notFound.routes).toContain('/graphql/schema.graphql');
  });
});

describe('GraphQL Code Generator', () => {
  /** The types graphql-codegen's CLI writes from `schema` with the typescript plugin (a config of its own, in a temp folder). */
  const typesFrom = async (schema: string, name: string): Promise<string> => {
    const config = join(work, `${name}.codegen.json`);
    const out = join(work, `${name}.ts`);
    writeFileSync(config, JSON.stringify({ schema, generates: { [out]: { plugins: ['typescript'] } } }));
    expect(await tool('graphql-codegen', ['--config', config])).toEqual({ status: 0, out: expect.any(String) });
    return readFileSync(out, 'utf8');
  };

  it('should generate the same TypeScript types from the file and from the served URL', async () => {
    const fromFile = await typesFrom(join(ROOT, 'schema/generated/api.graphql'), 'file');
    expect(fromFile).toMatch(/^export type Volume = \{/m);
    expect(fromFile).toMatch(/^export type VolumeOperation = \{/m);
    expect(await typesFrom(schemaUrl(open), 'url')).toBe(fromFile);
  }, 60_000);
});

describe("GraphQL Inspector's CLI", () => {
  it('should find no change between the served schema and the file, and refuse the subgraph SDL', async () => {
    expect(await tool('graphql-inspector', ['diff', schemaUrl(open), 'schema/generated/api.graphql'])).toEqual({
      status: 0,
      out: expect.stringContaining('No changes detected'),
    });
    const subgraph = await tool('graphql-inspector', [
      'diff',
      'schema/generated/published.graphql',
      'schema/generated/api.graphql',
    ]);
    expect(subgraph.status).not.toBe(0);
    expect(subgraph.out).toContain('Unknown directive "@link"');
  }, 60_000);
});
