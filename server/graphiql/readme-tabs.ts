/**
 * The README's example operations as GraphiQL tabs, so the IDE opens with the same examples
 * the README documents (and test/readme.test.ts runs): one source, never out of step.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Kind, parse, TokenKind, type OperationDefinitionNode } from 'graphql';

/** One preloaded GraphiQL tab; `variables` and `headers` are JSON (comments allowed). */
export interface GraphiQLTab {
  query: string;
  variables?: string;
  headers?: string;
}

/** Paging and the usual `input` say nothing about what a tab is for. */
const INCIDENTAL_ARGS = new Set(['first', 'after', 'last', 'before', 'input']);

const pascal = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Names an anonymous operation after its root fields (`CreateVolume`,
 * `StoragePluginsVolumeSnapshotsAndNomadExternalVolumes`): GraphiQL titles a tab by operation name, and a row
 * of tabs all called "<untitled>" would be useless. The text is otherwise kept as written.
 */
function nameOperation(query: string, op: OperationDefinitionNode, taken: Set<string>): string {
  if (op.name || !op.loc) return query;
  const fields = op.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s] : []));
  const names = fields.map((f) => pascal(f.name.value));
  // One root field: its distinguishing arguments tell two `volumes` tabs apart (`VolumesByFilter`).
  const args =
    fields.length === 1
      ? (fields[0]!.arguments ?? []).map((a) => a.name.value).filter((a) => !INCIDENTAL_ARGS.has(a))
      : [];
  const base =
    names.length <= 1
      ? `${names[0] ?? pascal(op.operation)}${args.length > 0 ? `By${args.map(pascal).join('And')}` : ''}`
      : `${names.slice(0, -1).join('')}And${names.at(-1)}`;
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  const start = op.loc.start;
  // `{ ... }` shorthand has no keyword; otherwise the name goes right after the keyword.
  if (op.loc.startToken.kind === TokenKind.BRACE_L)
    return `${query.slice(0, start)}query ${name} ${query.slice(start)}`;
  const afterKeyword = start + op.operation.length;
  // `mutation ($id: ID!)` becomes `mutation CreateVolumeSnapshot($id: ID!)`.
  return `${query.slice(0, afterKeyword)} ${name}${query.slice(afterKeyword).replace(/^ +\(/, '(')}`;
}

/** A variables skeleton naming each variable and its type, for the user to fill in. */
function variablesFor(op: OperationDefinitionNode, query: string): string | undefined {
  const defs = op.variableDefinitions ?? [];
  if (defs.length === 0) return undefined;
  const lines = defs.map((d) => {
    const type = d.type.loc ? query.slice(d.type.loc.start, d.type.loc.end) : '';
    return `  "${d.variable.name.value}": null // ${type}: fill in (an id comes from any query's \`id\` field)`;
  });
  return `{\n${lines.join(',\n')}\n}`;
}

/** Tabs for each ```graphql block of `markdown`, in order; blocks that do not parse are kept as written. */
export function tabsFromMarkdown(markdown: string, headers?: string): GraphiQLTab[] {
  const taken = new Set<string>();
  return [...markdown.matchAll(/```graphql\r?\n([\s\S]*?)```/g)].map((m) => {
    const text = m[1]!.trimEnd();
    let query = text;
    let variables: string | undefined;
    try {
      const ops = parse(text).definitions.filter(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      );
      if (ops.length === 1) {
        variables = variablesFor(ops[0]!, text);
        query = nameOperation(text, ops[0]!, taken);
      }
    } catch {
      // Not our job to reject the README; test/readme.test.ts does.
    }
    return { query, ...(variables ? { variables } : {}), ...(headers ? { headers } : {}) };
  });
}

/** Tabs from the README file, or none when it is missing (a trimmed deployment). */
export function readmeTabs(path: string, headers?: string): GraphiQLTab[] {
  return existsSync(path) ? tabsFromMarkdown(readFileSync(path, 'utf8'), headers) : [];
}
