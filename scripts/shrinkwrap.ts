/**
 * The packed tarball carries package-lock.json as `npm-shrinkwrap.json`, the one lockfile npm
 * reads from a package: `npm ci --omit=dev` in the unpacked package (deploy/Containerfile) and a
 * registry install of it get the dependency versions the tests ran against.
 *
 *   node --import tsx scripts/shrinkwrap.ts write    (prepack)
 *   node --import tsx scripts/shrinkwrap.ts remove   (postpack: in the repo npm keeps using package-lock.json)
 *
 * npm does not read the shrinkwrap of a tarball named on the command line (pacote does not look
 * inside): `npm install ./volume-gateway-*.tgz` resolves the version ranges afresh, which needs
 * the registry. {@link consumerLock} writes the lockfile that install would write, from the
 * tarball's shrinkwrap, so a folder can install it pinned, and offline from the npm cache.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

const ROOT = join(__dirname, '..');
const SHRINKWRAP = join(ROOT, 'npm-shrinkwrap.json');

interface LockEntry {
  dev?: boolean;
  resolved?: string;
  link?: boolean;
  [key: string]: unknown;
}
interface Lockfile {
  packages: Record<string, LockEntry>;
  [key: string]: unknown;
}

/** npm's public-registry tarball URL of the package at lock path `path` (`node_modules/@scope/name`). */
function registryTarball(path: string, entry: LockEntry): string {
  const name =
    (entry.name as string | undefined) ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  return `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${String(entry.version)}.tgz`;
}

/**
 * The package.json and package-lock.json of a folder whose one dependency is the tarball at
 * `tarball` (copied next to them), with the tarball's own dependencies at the versions its
 * shrinkwrap pins: `npm install --omit=dev` there installs exactly those, from the cache alone
 * when `npm ci` filled it.
 */
export function consumerLock(tarball: string, shrinkwrap: Lockfile): { packageJson: object; packageLock: object } {
  const root = shrinkwrap.packages[''] as {
    name: string;
    version: string;
    dependencies?: object;
    bin?: object;
    engines?: object;
    license?: string;
  };
  const spec = `file:${basename(tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  // The lock omits registry URLs (npm setting omit-lockfile-registry-resolved), and without one npm
  // asks the registry where the tarball is. npm maps this host to the configured registry.
  const deps = Object.fromEntries(
    Object.entries(shrinkwrap.packages)
      // A dependency's devDependencies are never installed.
      .filter(([path, entry]) => path !== '' && entry.dev !== true)
      .map(([path, entry]) => [
        path,
        entry.resolved || entry.link ? entry : { ...entry, resolved: registryTarball(path, entry) },
      ]),
  );
  const name = `${root.name}-install`;
  return {
    packageJson: { name, private: true, dependencies: { [root.name]: spec } },
    packageLock: {
      name,
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name, dependencies: { [root.name]: spec } },
        [`node_modules/${root.name}`]: {
          version: root.version,
          resolved: spec,
          integrity,
          license: root.license,
          dependencies: root.dependencies,
          bin: root.bin,
          engines: root.engines,
        },
        ...deps,
      },
    },
  };
}

function main(command: string | undefined): number {
  if (command === 'write') {
    copyFileSync(join(ROOT, 'package-lock.json'), SHRINKWRAP);
    return 0;
  }
  if (command === 'remove') {
    rmSync(SHRINKWRAP, { force: true });
    return 0;
  }
  console.error('usage: shrinkwrap.ts write|remove');
  return 2;
}

if (require.main === module) process.exit(main(process.argv[2]));
