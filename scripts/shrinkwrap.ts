/**
 * The packed tarball carries `npm-shrinkwrap.json`: the production part of package-lock.json, so
 * `npm install volume-gateway-*.tgz` installs the dependency versions the tests ran against
 * (npm honours a package's shrinkwrap, never its package-lock), and can install them offline
 * from a cache that `npm ci` filled (resolved URL and integrity known, no registry lookup).
 *
 *   node --import tsx scripts/shrinkwrap.ts write    (prepack)
 *   node --import tsx scripts/shrinkwrap.ts remove   (postpack: the repo itself keeps package-lock.json)
 *
 * npm reads a shrinkwrap from a registry package but not from a tarball named on the command
 * line (pacote does not look inside): `npm install ./volume-gateway-*.tgz` resolves the version
 * ranges afresh, which needs the registry. {@link consumerLock} writes the lockfile that install
 * would write, from the tarball's shrinkwrap, so a folder can install it offline and pinned.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** package-lock.json without the packages only development needs (a dependency's devDependencies are never installed). */
export function productionLock(lock: Lockfile): Lockfile {
  const packages = Object.fromEntries(Object.entries(lock.packages).filter(([path, entry]) => path === '' || entry.dev !== true));
  return { ...lock, packages };
}

/** npm's public-registry tarball URL of the package at lock path `path` (`node_modules/@scope/name`). */
function registryTarball(path: string, entry: LockEntry): string {
  const name = (entry.name as string | undefined) ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  return `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${String(entry.version)}.tgz`;
}

/**
 * The package.json and package-lock.json of a folder whose one dependency is the tarball at
 * `tarball` (copied next to them), with the tarball's own dependencies at the versions its
 * shrinkwrap pins: `npm install --omit=dev` there installs exactly those, from the cache alone
 * when `npm ci` filled it.
 */
export function consumerLock(tarball: string, shrinkwrap: Lockfile): { packageJson: object; packageLock: object } {
  const root = shrinkwrap.packages[''] as { name: string; version: string; dependencies?: object; bin?: object; engines?: object; license?: string };
  const spec = `file:${basename(tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  // The lock omits registry URLs (.npmrc: omit-lockfile-registry-resolved), and without one npm
  // asks the registry where the tarball is. npm maps this host to the configured registry.
  const deps = Object.fromEntries(
    Object.entries(shrinkwrap.packages)
      .filter(([path]) => path !== '')
      .map(([path, entry]) => [path, entry.resolved || entry.link ? entry : { ...entry, resolved: registryTarball(path, entry) }]),
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
        [`node_modules/${root.name}`]: { version: root.version, resolved: spec, integrity, license: root.license, dependencies: root.dependencies, bin: root.bin, engines: root.engines },
        ...deps,
      },
    },
  };
}

function main(command: string | undefined): number {
  if (command === 'write') {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
    writeFileSync(SHRINKWRAP, `${JSON.stringify(productionLock(lock), null, 2)}\n`);
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
