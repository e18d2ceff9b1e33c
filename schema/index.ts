/** The unified schema's SDL, read from the `.graphql` files beside this module (or the package's `schema/` when compiled). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function schemaDir(): string {
  const here = __dirname;
  return existsSync(join(here, 'volume.graphql')) ? here : join(here, '..', '..', 'schema');
}

/** SDL documents, one per concept, in a stable order. */
export function loadTypeDefs(): string[] {
  const dir = schemaDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'));
}
