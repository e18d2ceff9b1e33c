/** The unified schema's SDL, read from the `.graphql` files under this folder (or the package's `schema/` when compiled). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

function schemaDir(): string {
  const here = __dirname;
  return existsSync(join(here, 'volume.graphql')) ? here : join(here, '..', '..', 'schema');
}

const graphqlFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isFile() && e.name.endsWith('.graphql') ? [join(dir, e.name)] : [],
      )
    : [];

/**
 * SDL documents, one per concept, in a stable order (by path): the core's (this folder's own files),
 * then each backend's folder of those named (`backends`: the registered kinds, server/kinds/).
 */
export function loadTypeDefs(backends: readonly string[]): string[] {
  const dir = schemaDir();
  return [dir, ...backends.map((b) => join(dir, b))]
    .flatMap(graphqlFiles)
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
