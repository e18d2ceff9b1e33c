/**
 * The bundle's files, read once at start-up and served from memory: they are immutable
 * (content-hashed names), a few MB in all, and a request never touches the file system, so
 * no path from a URL can reach a file outside the folder.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { MANIFEST_FILE, type GraphiQLManifest } from './manifest';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
};

/** Hashed names change whenever the content does, so browsers may keep them for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  type: string;
  body: Buffer;
  /** Written by the build for compressible files. */
  gzip?: Buffer;
}

export interface LoadedAssets {
  manifest: GraphiQLManifest;
  files: Map<string, Asset>;
}

/**
 * Per folder, while its manifest is unchanged: tests start many gateways in one process, and
 * each would otherwise hold its own copy of the same few MB.
 */
const cache = new Map<string, { mtimeMs: number; assets: LoadedAssets }>();

/** The built assets, or undefined when the build has not run (the build writes the manifest last). */
export function loadAssets(dir: string): LoadedAssets | undefined {
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) return undefined;
  const { mtimeMs } = statSync(manifestPath);
  const cached = cache.get(dir);
  if (cached?.mtimeMs === mtimeMs) return cached.assets;
  const assets = readAssets(dir);
  if (assets) cache.set(dir, { mtimeMs, assets });
  return assets;
}

/** Undefined when a file the manifest names is missing: a broken IDE must not stop the API. */
function readAssets(dir: string): LoadedAssets | undefined {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as GraphiQLManifest;
  const files = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[extname(name)];
    if (!type) continue; // the manifest and the .gz twins are not addressable
    const gz = join(dir, `${name}.gz`);
    files.set(name, { type, body: readFileSync(join(dir, name)), gzip: existsSync(gz) ? readFileSync(gz) : undefined });
  }
  return Object.values(manifest.files).every((name) => files.has(name)) ? { manifest, files } : undefined;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return coding === 'gzip' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** Answers a request for `name` (already stripped of the assets path). */
export function serveAsset(
  assets: LoadedAssets | undefined,
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const asset = assets?.files.get(name);
  if (!asset) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(assets ? 'not found\n' : 'GraphiQL is not built: run `npm run build`\n');
    return;
  }
  const gzip = asset.gzip && acceptsGzip(req) ? asset.gzip : undefined;
  const body = gzip ?? asset.body;
  res.writeHead(200, {
    'content-type': asset.type,
    'content-length': body.length,
    'cache-control': IMMUTABLE,
    'x-content-type-options': 'nosniff',
    ...(asset.gzip ? { vary: 'accept-encoding' } : {}),
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
