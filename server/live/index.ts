/**
 * The live status page at `GET /live`: volumes across backends with their attachments, updated
 * live from `volumeChanged` over graphql-ws. Bundled at build time (scripts/build-live.ts) and
 * served by the gateway with its assets under `/live/assets/`, same origin, no CDN.
 *
 * ```ts
 * const live = createLivePageHandler({ endpointPath: '/graphql' });
 * // in the request listener: if (live(req, res, url)) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { loadAssets, serveAsset, type LoadedAssets } from '../graphiql/assets';
import { packageRoot } from '../graphiql/paths';
import type { LiveManifest } from './manifest';
import { LIVE_CONTENT_SECURITY_POLICY, liveNotBuiltPage, renderLivePage } from './page';

export { LIVE_CONTENT_SECURITY_POLICY } from './page';
export type { LivePageConfig } from './page';

export interface LivePageOptions {
  /** Path of the page. @default '/live' */
  path?: string;
  /** GraphQL endpoint the page lists from (HTTP) and subscribes at (graphql-ws). @default '/graphql' */
  endpointPath?: string;
  /** Headers the page sends until the user sets others; demo mode passes the demo's tokens. @default none (the page asks) */
  defaultHeaders?: Record<string, string>;
  /** Folder with the built bundle and its manifest.json. @default dist/server/live/assets */
  assetsDir?: string;
  /** Page title. @default 'Live status · volume gateway' */
  title?: string;
}

/** Answers the request and returns true, or returns false without touching `res`. */
export type LivePageHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

/** Where `npm run build` writes the page's bundle. */
export function defaultLiveAssetsDir(): string {
  return join(packageRoot(), 'dist', 'server', 'live', 'assets');
}

/** Reads the bundle once at start-up; unbuilt, the page says how to build it and the API is unaffected. */
export function createLivePageHandler(options: LivePageOptions = {}): LivePageHandler {
  const path = (options.path ?? '/live').replace(/\/+$/, '');
  const assetsPath = `${path}/assets`;
  const title = options.title ?? 'Live status · volume gateway';
  // The GraphiQL loader is generic over the manifest's `files`; this manifest names two.
  const assets: LoadedAssets | undefined = loadAssets(options.assetsDir ?? defaultLiveAssetsDir());
  const manifest = assets?.manifest as unknown as LiveManifest | undefined;
  const html = manifest
    ? renderLivePage({
        title,
        assetsPath,
        manifest,
        config: {
          endpointPath: options.endpointPath ?? '/graphql',
          defaultHeaders: options.defaultHeaders ?? null,
          demo: options.defaultHeaders !== undefined,
        },
      })
    : liveNotBuiltPage(title);
  const page = Buffer.from(html, 'utf8');

  return (req, res, url) => {
    const isPage = url.pathname === path || url.pathname === `${path}/`;
    const isAsset = url.pathname.startsWith(`${assetsPath}/`);
    if (!isPage && !isAsset) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return true;
    }
    if (isAsset) {
      serveAsset(assets, url.pathname.slice(assetsPath.length + 1), req, res);
      return true;
    }
    res.writeHead(assets ? 200 : 503, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': page.length,
      // The page names the current hashed bundle and may carry demo tokens: revalidate, keep out of shared caches.
      'cache-control': 'no-cache, private',
      'content-security-policy': LIVE_CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : page);
    return true;
  };
}
