/**
 * The published-schema check (issue 10): the subgraph SDL as routers see it is committed in
 * `schema/generated/published.graphql`, and every change to the schema is diffed against it with
 * graphql-inspector.
 *
 *   npm run schema:check                     # fails on unaccepted breaking changes or a stale file
 *   npm run schema:check -- --against main   # diff against another commit's published SDL too
 *   npm run schema:publish                   # refresh the file (refused while a break is unaccepted)
 *   npm run schema:publish -- --allow-breaking   # re-baseline: only before the schema's first release
 *
 * A breaking change needs a deprecation first (removing a `@deprecated` field is only DANGEROUS),
 * or a line in `schema/breaking-changes.md` with a reason. The SDL is built from
 * `server/schema.ts`'s `buildGatewaySchema` without starting a server.
 *
 * Next to it, `schema/generated/api.graphql` is the API schema clients and their tools read (the
 * same SDL without Federation's directives and fields, server/api-schema.ts): publish writes it
 * too, and the check fails when it is not the current schema's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { type Change, CriticalityLevel, diff, DiffRule } from '@graphql-inspector/core';
import { parse } from 'graphql';
import { API_SCHEMA_FILE, apiSchemaText } from '../server/api-schema';
import { buildGatewaySchema } from '../server/schema';

/** The committed SDL, relative to the repository root. Under generated/ because `loadTypeDefs` skips that folder. */
export const PUBLISHED_PATH = 'schema/generated/published.graphql';
/** Breaking changes accepted on purpose, relative to the repository root. */
export const ACCEPTED_BREAKS_PATH = 'schema/breaking-changes.md';

const HEADER = [
  '# The volume gateway subgraph SDL (schema v2) as routers see it: printSubgraphSchema of server/schema.ts.',
  '# Do not edit: `npm run schema:publish` writes it. `npm run schema:check` (in `npm test`) diffs the schema',
  '# against it; a breaking change needs a deprecation first or a line in schema/breaking-changes.md.',
  '',
  '',
].join('\n');

/** The file content that publishes `sdl`. */
export const publishedText = (sdl: string): string => `${HEADER}${sdl.trimEnd()}\n`;

/** The current subgraph SDL, from the executable schema (resolvers included), as `_service { sdl }` minus federation's own definitions. */
export async function currentSdl(): Promise<string> {
  return printSubgraphSchema(buildGatewaySchema());
}

/** One accepted breaking change: `- \`<path>\` <CHANGE_TYPE>: <reason>` in the markdown list. */
export interface AcceptedBreak {
  path: string;
  type: string;
  reason: string;
}

/** What `schema/breaking-changes.md` accepts (list items under its `## Accepted` heading), and the entry-like lines it could not read. */
export function parseAcceptedBreaks(markdown: string): { accepted: AcceptedBreak[]; malformed: string[] } {
  const accepted: AcceptedBreak[] = [];
  const malformed: string[] = [];
  const at = markdown.search(/^## Accepted\s*$/m);
  for (const line of at < 0 ? [] : markdown.slice(at).split('\n')) {
    if (!/^\s*[-*]\s+`/.test(line)) continue;
    const m = /^\s*[-*]\s+`([^`]+)`\s+([A-Z_]+)\s*:\s*(\S.*)$/.exec(line);
    if (m) accepted.push({ path: m[1]!, type: m[2]!, reason: m[3]!.trim() });
    else malformed.push(line.trim());
  }
  return { accepted, malformed };
}

/** Removing an entity's `@key` breaks the other subgraphs that reference it; graphql-inspector only calls it DANGEROUS. */
const removesKey = (c: Change): boolean =>
  c.type.startsWith('DIRECTIVE_USAGE_') && c.type.endsWith('_REMOVED') && /\.@key$/.test(c.path ?? '');

/** graphql-inspector's changes from `before` to `after` (both subgraph SDL), with a removed `@key` made BREAKING. */
export async function schemaChanges(before: string, after: string): Promise<Change[]> {
  const build = (sdl: string) => buildSubgraphSchema({ typeDefs: parse(sdl) });
  const changes = await diff(build(before), build(after), [DiffRule.suppressRemovalOfDeprecatedField]);
  return changes.map((c) =>
    removesKey(c)
      ? {
          ...c,
          criticality: {
            level: CriticalityLevel.Breaking,
            reason: 'other subgraphs may reference this entity by its key',
          },
        }
      : c,
  );
}

/** What the check found. */
export interface SchemaCheckReport {
  /** Every change from the published SDL. */
  changes: Change[];
  /** Breaking changes with no entry in the accepted list. */
  unaccepted: Change[];
  /** Breaking changes the list accepts. */
  accepted: Change[];
  /** Entry-like lines of the accepted list that do not read as `- \`path\` TYPE: reason`. */
  malformed: string[];
  /** The published file is not the current SDL. */
  stale: boolean;
}

/** Compares the published file's text with the current SDL. */
export async function checkSchema(a: {
  publishedFile: string;
  current: string;
  acceptedMarkdown: string;
}): Promise<SchemaCheckReport> {
  const { accepted: entries, malformed } = parseAcceptedBreaks(a.acceptedMarkdown);
  const changes = await schemaChanges(a.publishedFile, a.current);
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
  const isAccepted = (c: Change): boolean => entries.some((e) => e.path === (c.path ?? '') && e.type === c.type);
  return {
    changes,
    unaccepted: breaking.filter((c) => !isAccepted(c)),
    accepted: breaking.filter(isAccepted),
    malformed,
    stale: a.publishedFile !== publishedText(a.current),
  };
}

const describe = (c: Change): string => `${c.criticality.level} ${c.type} ${c.path ?? '(schema)'}: ${c.message}`;

/** Human-readable problems of a report; empty when the check passes. */
export function problems(r: SchemaCheckReport, what = PUBLISHED_PATH): string[] {
  const out: string[] = [];
  for (const line of r.malformed)
    out.push(`${ACCEPTED_BREAKS_PATH}: cannot read "${line}" (write: - \`<path>\` <CHANGE_TYPE>: <reason>)`);
  for (const c of r.unaccepted) {
    out.push(
      `${describe(c)}\n  Deprecate first (@deprecated(reason: "…")), or accept it in ${ACCEPTED_BREAKS_PATH}:\n  - \`${c.path ?? ''}\` ${c.type}: <why clients can take this break>`,
    );
  }
  if (r.stale)
    out.push(
      `${what} is stale (${r.changes.length} schema change(s) since it was published): run \`npm run schema:publish\` and commit it.`,
    );
  return out;
}

function read(root: string, path: string): string | null {
  const file = join(root, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

/** The published file as committed at `ref` (git), or null when it is not there. */
function publishedAt(root: string, ref: string): string | null {
  try {
    return execFileSync('git', ['show', `${ref}:${PUBLISHED_PATH}`], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return null;
  }
}

/** The command line: exit code 0 when the check (or publish) succeeds, 1 otherwise. */
export async function main(argv: readonly string[], root = join(__dirname, '..')): Promise<number> {
  const publish = argv.includes('--publish');
  const allowBreaking = publish && argv.includes('--allow-breaking');
  const againstAt = argv.indexOf('--against');
  const against = againstAt >= 0 ? argv[againstAt + 1] : undefined;
  const current = await currentSdl();
  const acceptedMarkdown = read(root, ACCEPTED_BREAKS_PATH) ?? '';
  const published = read(root, PUBLISHED_PATH);
  const report = published === null ? null : await checkSchema({ publishedFile: published, current, acceptedMarkdown });
  // Publishing is what makes a stale file current; a re-baseline also takes the unaccepted breaks.
  const found = report
    ? problems({ ...report, stale: report.stale && !publish, unaccepted: allowBreaking ? [] : report.unaccepted })
    : [];
  for (const c of allowBreaking ? (report?.unaccepted ?? []) : []) console.warn(`published despite: ${describe(c)}`);
  if (published === null && !publish)
    found.push(`${PUBLISHED_PATH} is missing: run \`npm run schema:publish\` and commit it.`);
  const api = apiSchemaText(current);
  const apiFile = read(root, API_SCHEMA_FILE);
  if (!publish && apiFile !== api)
    found.push(
      `${API_SCHEMA_FILE} is ${apiFile === null ? 'missing' : 'stale'}: run \`npm run schema:publish\` and commit it.`,
    );
  if (against !== undefined) {
    const base = publishedAt(root, against);
    if (base === null) found.push(`--against ${against}: ${PUBLISHED_PATH} is not in that commit`);
    else
      found.push(
        ...problems({ ...(await checkSchema({ publishedFile: base, current, acceptedMarkdown })), stale: false }).map(
          (p) => `against ${against}: ${p}`,
        ),
      );
  }
  for (const c of report?.accepted ?? []) console.log(`accepted: ${describe(c)}`);
  if (found.length > 0) {
    console.error(`schema ${publish ? 'publish refused' : 'check failed'}:\n${found.map((p) => `- ${p}`).join('\n')}`);
    return 1;
  }
  if (publish) {
    writeFileSync(join(root, PUBLISHED_PATH), publishedText(current));
    writeFileSync(join(root, API_SCHEMA_FILE), api);
    console.log(
      `wrote ${PUBLISHED_PATH}${report ? ` (${report.changes.length} change(s))` : ''} and ${API_SCHEMA_FILE}`,
    );
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
