/**
 * The folder that holds the gateway's package.json: the repository when run from source
 * (server/*.ts), the installed package when run built (dist/server/*.js). What the package ships
 * beside the code (docs/, config.schema.json, the version) is found from here, wherever it is installed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The package's folder (absolute). */
export function packageRoot(): string {
  return [join(__dirname, '..'), join(__dirname, '..', '..')].find((dir) => existsSync(join(dir, 'package.json')))!;
}
