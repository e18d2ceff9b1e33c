/**
 * scripts/schema-check.ts: graphql-inspector's verdicts on small subgraph SDLs, the accepted-breaks
 * list, and the stale-file rule. The real schema's check runs as `npm run schema:check` in `npm test`;
 * here its command runs on a copy of the committed files, to see it refuse a stale API schema.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkSchema, main, parseAcceptedBreaks, problems, publishedText } from '../../scripts/schema-check';

const BASE = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])

"Root."
type Query {
  "A thing by id."
  thing(id: ID!): Thing
  "Every thing."
  things: [Thing!]!
}

"A thing."
type Thing @key(fields: "id") {
  "Its id."
  id: ID!
  "Its size in bytes."
  sizeBytes: Int!
  "Replaced by sizeBytes."
  size: Int @deprecated(reason: "Use sizeBytes.")
}

"A thing to make."
input ThingInput {
  "Its name."
  name: String!
}

"Makes things."
type Mutation {
  "Make one."
  makeThing(input: ThingInput!): Thing
}
`;

const NO_ACCEPTED = '# Accepted breaking changes\n\n## Accepted\n\n(none)\n';
const check = (current: string, acceptedMarkdown = NO_ACCEPTED) =>
  checkSchema({ publishedFile: publishedText(BASE), current, acceptedMarkdown });
const summary = (cs: ReadonlyArray<{ type: string; path?: string }>) => cs.map((c) => `${c.type} ${c.path}`);

describe('schema check', () => {
  test('the published SDL itself passes: no changes, not stale', async () => {
    const r = await check(BASE);
    expect(r.changes).toEqual([]);
    expect(r.stale).toBe(false);
    expect(problems(r)).toEqual([]);
  });

  test('a removed field is breaking and unaccepted', async () => {
    const r = await check(BASE.replace('  "Every thing."\n  things: [Thing!]!\n', ''));
    expect(summary(r.unaccepted)).toEqual(['FIELD_REMOVED Query.things']);
    const said = problems(r).join('\n');
    expect(said).toContain('BREAKING FIELD_REMOVED Query.things');
    expect(said).toContain('- `Query.things` FIELD_REMOVED: <why');
  });

  test('a changed field type is breaking', async () => {
    const r = await check(BASE.replace('sizeBytes: Int!', 'sizeBytes: String!'));
    expect(summary(r.unaccepted)).toEqual(['FIELD_TYPE_CHANGED Thing.sizeBytes']);
  });

  test('a new required input field is breaking; an entity losing its @key is made breaking', async () => {
    const r = await check(
      BASE.replace('  name: String!\n', '  name: String!\n  "Its colour."\n  colour: String!\n').replace(
        ' @key(fields: "id")',
        '',
      ),
    );
    expect(summary(r.unaccepted)).toEqual(
      expect.arrayContaining([
        'INPUT_FIELD_ADDED ThingInput.colour',
        'DIRECTIVE_USAGE_OBJECT_REMOVED Thing.@key',
        'FIELD_REMOVED Query._entities',
      ]),
    );
  });

  test('an added optional field (output and input) is accepted, but the published file is then stale', async () => {
    const current = BASE.replace(
      '  "Its size in bytes."',
      '  "Its colour."\n  colour: String\n  "Its size in bytes."',
    ).replace('  name: String!\n', '  name: String!\n  "Its colour."\n  colour: String\n');
    const r = await check(current);
    expect(r.unaccepted).toEqual([]);
    expect(summary(r.changes)).toEqual(
      expect.arrayContaining(['FIELD_ADDED Thing.colour', 'INPUT_FIELD_ADDED ThingInput.colour']),
    );
    expect(r.stale).toBe(true);
    expect(problems(r)).toEqual([
      expect.stringContaining('is stale (4 schema change(s) since it was published): run `npm run schema:publish`'),
    ]);
  });

  test('removing a deprecated field is only dangerous (deprecate first)', async () => {
    const r = await check(
      BASE.replace('  "Replaced by sizeBytes."\n  size: Int @deprecated(reason: "Use sizeBytes.")\n', ''),
    );
    expect(r.unaccepted).toEqual([]);
    expect(r.changes.map((c) => `${c.criticality.level} ${c.type} ${c.path}`)).toEqual([
      'DANGEROUS FIELD_REMOVED Thing.size',
    ]);
  });

  test('a break listed with a reason under "Accepted" passes; elsewhere, or without a reason, it does not', async () => {
    const removed = BASE.replace('  "Every thing."\n  things: [Thing!]!\n', '');
    const listed = '## Accepted\n\n- `Query.things` FIELD_REMOVED: nobody called it (router usage, 30 days)\n';
    const ok = await check(removed, listed);
    expect(ok.unaccepted).toEqual([]);
    expect(summary(ok.accepted)).toEqual(['FIELD_REMOVED Query.things']);

    const wrongType = await check(removed, '## Accepted\n\n- `Query.things` FIELD_TYPE_CHANGED: another change\n');
    expect(summary(wrongType.unaccepted)).toEqual(['FIELD_REMOVED Query.things']);
    const outside = await check(removed, '- `Query.things` FIELD_REMOVED: above the heading\n\n## Accepted\n');
    expect(summary(outside.unaccepted)).toEqual(['FIELD_REMOVED Query.things']);
    const noReason = await check(removed, '## Accepted\n\n- `Query.things` FIELD_REMOVED:\n');
    expect(summary(noReason.unaccepted)).toEqual(['FIELD_REMOVED Query.things']);
    expect(problems(noReason)[0]).toContain('cannot read "- `Query.things` FIELD_REMOVED:"');
  });

  test('the accepted list reads path, change type and reason', () => {
    expect(parseAcceptedBreaks('intro\n## Accepted\n* `Volume.x` ENUM_VALUE_REMOVED: gone: really\n')).toEqual({
      accepted: [{ path: 'Volume.x', type: 'ENUM_VALUE_REMOVED', reason: 'gone: really' }],
      malformed: [],
    });
  });
});

describe('the API schema file (schema/generated/api.graphql)', () => {
  const ROOT = join(__dirname, '..', '..');
  let root: string;
  const said: string[] = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'vg-schema-check-'));
    mkdirSync(join(root, 'schema', 'generated'), { recursive: true });
    for (const f of ['schema/generated/published.graphql', 'schema/breaking-changes.md'])
      copyFileSync(join(ROOT, f), join(root, f));
    jest.spyOn(console, 'error').mockImplementation((m: string) => void said.push(m));
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
  });
  afterAll(() => {
    jest.restoreAllMocks();
    rmSync(root, { recursive: true, force: true });
  });

  test('missing or stale fails the check; publish writes the committed text', async () => {
    const api = join(root, 'schema', 'generated', 'api.graphql');
    expect(await main([], root)).toBe(1);
    expect(said.join('\n')).toContain('schema/generated/api.graphql is missing: run `npm run schema:publish`');
    writeFileSync(
      api,
      readFileSync(join(ROOT, 'schema/generated/api.graphql'), 'utf8').replace('type Volume ', 'type Volume2 '),
    );
    expect(await main([], root)).toBe(1);
    expect(said.join('\n')).toContain('schema/generated/api.graphql is stale: run `npm run schema:publish`');
    expect(await main(['--publish'], root)).toBe(0);
    expect(readFileSync(api, 'utf8')).toBe(readFileSync(join(ROOT, 'schema/generated/api.graphql'), 'utf8'));
    expect(await main([], root)).toBe(0);
  });
});
