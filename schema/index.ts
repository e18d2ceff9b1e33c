/** The unified schema's SDL, read from the `.graphql` files under this folder (or the package's `schema/` when compiled). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

function schemaDir(): string {
  const here = __dirname;
  return existsSync(join(here, 'volume.graphql')) ? here : join(here, '..', '..', 'schema');
}

function graphqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : graphqlFiles(path);
    return e.name.endsWith('.graphql') ? [path] : [];
  });
}

/** SDL documents, one per concept, in a stable order (by path: core first, then backends' folders). */
export function loadTypeDefs(): string[] {
  const dir = schemaDir();
  return graphqlFiles(dir)
    .sort((a, b) => relative(dir, a).localeCompare(relative(dir, b)))
    .map((f) => readFileSync(f, 'utf8'));
}

/**
 * The published subgraph SDL (`schema/generated/published.graphql`, written by `npm run schema:publish`),
 * whose layout the built schema keeps (server/schema-layout.ts); undefined when it is not there.
 */
export function loadPublishedSdl(): string | undefined {
  const file = join(schemaDir(), 'generated', 'published.graphql');
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}
