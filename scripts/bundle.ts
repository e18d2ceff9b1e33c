/**
 * The installed package as one archive, for hosts that run it without a container (Nomad's
 * `exec` driver, deploy/nomad/volume-gateway.exec.json; a systemd unit): `npm pack`, then the
 * tarball installed with `npm ci --omit=dev` into `volume-gateway/` at the versions its
 * shrinkwrap pins, then that folder archived. The dependencies are plain JavaScript, so the bundle
 * runs on any Linux with Node.js 20.19+.
 *
 *   node --import tsx scripts/bundle.ts [--offline] [outDir]
 *     → outDir/volume-gateway-<version>-bundle.tar.gz (default outDir: .)
 *     run: node volume-gateway/node_modules/volume-gateway/dist/server/main.js
 *
 * Without --offline it downloads from the registry (the full network install); with it, from
 * the npm cache only, as the test suite does.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { consumerLock } from './shrinkwrap';

const ROOT = join(__dirname, '..');

function main(args: string[]): void {
  const offline = args.includes('--offline');
  const outDir = resolve(args.find((a) => !a.startsWith('--')) ?? '.');
  const work = mkdtempSync(join(tmpdir(), 'vg-bundle-'));
  try {
    execFileSync('npm', ['pack', '--pack-destination', work], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const tgzName = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
    const app = join(work, 'volume-gateway');
    mkdirSync(app);
    const tgz = join(app, tgzName);
    copyFileSync(join(work, tgzName), tgz);
    const shrinkwrap = JSON.parse(
      execFileSync('tar', ['xzfO', tgz, 'package/npm-shrinkwrap.json'], {
        encoding: 'utf8',
        maxBuffer: 64 * 1_048_576,
      }),
    );
    const { packageJson, packageLock } = consumerLock(tgz, shrinkwrap);
    writeFileSync(join(app, 'package.json'), JSON.stringify(packageJson, null, 2));
    writeFileSync(join(app, 'package-lock.json'), JSON.stringify(packageLock, null, 2));
    execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', ...(offline ? ['--offline'] : [])], {
      cwd: app,
      stdio: 'inherit',
    });
    rmSync(tgz);
    const out = join(outDir, tgzName.replace(/\.tgz$/, '-bundle.tar.gz'));
    mkdirSync(outDir, { recursive: true });
    execFileSync('tar', ['czf', out, '-C', work, 'volume-gateway']);
    console.log(out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main(process.argv.slice(2));
