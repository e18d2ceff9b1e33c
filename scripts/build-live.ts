/**
 * Bundles the live status page (server/live/page/: plain TypeScript/JavaScript and graphql-ws,
 * no framework) with esbuild into the folder the gateway serves at `/live/assets/`: hashed names,
 * a `.gz` twin of each file, licences and `manifest.json`, so the page needs no CDN. Part of
 * `npm run build`; the browser test calls `buildLivePage` into a temp folder.
 *
 *   node --import tsx scripts/build-live.ts [outDir]   (default dist/server/live/assets)
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { defaultLiveAssetsDir } from '../server/live';
import { LIVE_MANIFEST_FILE, type LiveManifest } from '../server/live/manifest';

const root = resolve(__dirname, '..');
const ENTRY = 'server/live/page/main.js';
/** Packages whose code ends up in the bundle. */
const BUNDLED = ['graphql-ws'];

export interface BuildLiveOptions {
  /** Folder to (re)create. @default `dist/server/live/assets` */
  outDir?: string;
  /** Minify the bundle. @default true */
  minify?: boolean;
}

export async function buildLivePage(o: BuildLiveOptions = {}): Promise<LiveManifest> {
  const outDir = resolve(o.outDir ?? defaultLiveAssetsDir());
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [{ in: ENTRY, out: 'live' }],
    outdir: outDir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16.4'],
    minify: o.minify ?? true,
    entryNames: '[name]-[hash]',
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const [script, out] = outputs.find(([f, x]) => f.endsWith('.js') && x.entryPoint === ENTRY) ?? [];
  if (!script || !out?.cssBundle) throw new Error(`esbuild wrote no script or styles for ${ENTRY}`);
  const name = (f: string): string => relative(outDir, resolve(root, f));
  const manifest: LiveManifest = {
    files: { script: name(script), style: name(out.cssBundle) },
    versions: Object.fromEntries(
      BUNDLED.map((p) => [
        p,
        (JSON.parse(readFileSync(join(root, 'node_modules', p, 'package.json'), 'utf8')) as { version: string })
          .version,
      ]),
    ),
  };
  for (const f of readdirSync(outDir)) {
    if (/\.(js|css|txt)$/.test(f))
      writeFileSync(join(outDir, `${f}.gz`), gzipSync(readFileSync(join(outDir, f)), { level: 9 }));
  }
  // Last: the server treats a folder without a manifest as not built.
  writeFileSync(join(outDir, LIVE_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (require.main === module) {
  const started = Date.now();
  buildLivePage({ outDir: process.argv[2] }).then(
    (m) =>
      console.log(
        `live page bundled (${m.files.script}) into ${relative(process.cwd(), resolve(process.argv[2] ?? defaultLiveAssetsDir()))} in ${Date.now() - started} ms`,
      ),
    (err: unknown) => {
      console.error('build-live failed:', err);
      process.exit(1);
    },
  );
}
