/**
 * The config file's JSON Schema (server/config-schema.ts), committed as config.schema.json.
 *
 *   npm run config:schema           # write it
 *   npm run config:schema:check     # fail when it is stale (in npm test)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_SCHEMA_PATH, configSchemaText } from '../server/config-schema';

const path = join(__dirname, '..', CONFIG_SCHEMA_PATH);
const want = configSchemaText();

if (process.argv.includes('--check')) {
  let have = '';
  try {
    have = readFileSync(path, 'utf8');
  } catch {
    // Missing counts as stale.
  }
  if (have !== want) {
    console.error(
      `${CONFIG_SCHEMA_PATH} is stale: the config definition changed. Run npm run config:schema and commit it.`,
    );
    process.exit(1);
  }
  console.log(`${CONFIG_SCHEMA_PATH} is up to date.`);
} else {
  writeFileSync(path, want);
  console.log(`wrote ${CONFIG_SCHEMA_PATH}`);
}
