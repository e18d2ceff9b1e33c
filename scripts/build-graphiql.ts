/**
 * Bundles the GraphiQL IDE (graphiql, React, Monaco and its workers, graphql-ws) from
 * node_modules with esbuild into one folder the gateway serves at run time, so the page needs
 * no CDN. Part of `npm run build`; the browser test calls `buildGraphiQL` into a temp folder.
 *
 *   node --import tsx scripts/build-graphiql.ts [outDir]   (default dist/server/graphiql/assets)
 *
 * Output: content-hashed `.js`/`.css`/font files, a `.gz` twin of each compressible file
 * (gzip once here instead of per request), their licences (`*.LEGAL.txt`) and `manifest.json`.
 */
import { build, type Metafile, type Plugin } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { MANIFEST_FILE, type GraphiQLManifest } from '../server/graphiql/manifest';
import { defaultAssetsDir } from '../server/graphiql/paths';

const root = resolve(__dirname, '..');

/** Where the server looks by default. */
export const DEFAULT_OUT_DIR = defaultAssetsDir();

export interface BuildGraphiQLOptions {
  /** Folder to (re)create. @default `dist/server/graphiql/assets` */
  outDir?: string;
  /** Minify the bundles. @default true */
  minify?: boolean;
}

/** Packages whose versions end up in the bundle, recorded in the manifest. */
const BUNDLED = [
  'graphiql',
  '@graphiql/react',
  '@graphiql/toolkit',
  'react',
  'react-dom',
  'monaco-editor',
  'monaco-graphql',
  'graphql',
  'graphql-ws',
];

/** Worker entry points, by manifest key; Monaco asks for them by label (client/workers.js). */
const WORKERS = {
  editorWorker: 'monaco-editor/esm/vs/editor/editor.worker.js',
  jsonWorker: 'monaco-editor/esm/vs/language/json/json.worker.js',
  graphqlWorker: 'monaco-graphql/esm/graphql.worker.js',
} as const;

/**
 * `graphiql/style.css` already contains Monaco's styles; the CSS files Monaco's ESM modules
 * import one by one would add the same 600 kB again, so they are dropped.
 */
const skipMonacoCss: Plugin = {
  name: 'skip-monaco-css',
  setup(b) {
    b.onResolve({ filter: /\.css$/ }, (args) =>
      /[\\/]monaco-editor[\\/]/.test(args.importer) ? { path: args.path, namespace: 'empty-css' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'empty-css' }, () => ({ contents: '', loader: 'css' }));
  },
};

function versionOf(pkg: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** The file esbuild wrote for an entry point, or the CSS bundle of that entry's imports. */
function outputFor(meta: Metafile, outDir: string, entry: string, kind: 'js' | 'css'): string {
  const [file, out] = Object.entries(meta.outputs).find(([f, o]) => f.endsWith('.js') && o.entryPoint === entry) ?? [];
  const wanted = kind === 'js' ? file : out?.cssBundle;
  if (!wanted) throw new Error(`esbuild wrote no ${kind} for ${entry}`);
  return relative(outDir, resolve(root, wanted));
}

export async function buildGraphiQL(o: BuildGraphiQLOptions = {}): Promise<GraphiQLManifest> {
  const outDir = resolve(o.outDir ?? DEFAULT_OUT_DIR);
  // Hashed names change with every version: start empty so old bundles do not pile up.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const main = 'server/graphiql/client/main.js';
  const result = await build({
    absWorkingDir: root,
    entryPoints: [
      { in: main, out: 'graphiql' },
      ...Object.entries(WORKERS).map(([out, path]) => ({ in: path, out: out.replace('Worker', '.worker') })),
    ],
    outdir: outDir,
    bundle: true,
    // Classic scripts: workers are created with `new Worker(url)` (no module workers needed)
    // and the page loads one deferred script.
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16.4'],
    minify: o.minify ?? true,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.svg': 'file', '.png': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [skipMonacoCss],
  });
  const meta = result.metafile;
  // esbuild names entry points by the path it resolved, relative to absWorkingDir.
  const entryOf = (spec: string): string => relative(root, require.resolve(spec, { paths: [root] }));
  const manifest: GraphiQLManifest = {
    files: {
      script: outputFor(meta, outDir, main, 'js'),
      style: outputFor(meta, outDir, main, 'css'),
      editorWorker: outputFor(meta, outDir, entryOf(WORKERS.editorWorker), 'js'),
      jsonWorker: outputFor(meta, outDir, entryOf(WORKERS.jsonWorker), 'js'),
      graphqlWorker: outputFor(meta, outDir, entryOf(WORKERS.graphqlWorker), 'js'),
    },
    versions: Object.fromEntries(BUNDLED.map((p) => [p, versionOf(p)])),
  };
  for (const name of readdirSync(outDir)) {
    if (/\.(js|css|txt|svg|ttf)$/.test(name))
      writeFileSync(join(outDir, `${name}.gz`), gzipSync(readFileSync(join(outDir, name)), { level: 9 }));
  }
  writeFileSync(join(outDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (require.main === module) {
  const started = Date.now();
  buildGraphiQL({ outDir: process.argv[2] }).then(
    (m) =>
      console.log(
        `GraphiQL ${m.versions.graphiql} bundled into ${relative(process.cwd(), resolve(process.argv[2] ?? DEFAULT_OUT_DIR))} in ${Date.now() - started} ms`,
      ),
    (err: unknown) => {
      console.error('build-graphiql failed:', err);
      process.exit(1);
    },
  );
}
