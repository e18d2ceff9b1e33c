/**
 * GraphiQL, bundled from npm at build time (scripts/build-graphiql.ts) and served by the
 * gateway itself: a browser opening `GET /graphql` gets the IDE, and the page loads its script,
 * styles, fonts and Monaco workers from `/graphiql/assets/` on the same origin. Nothing comes
 * from a CDN, so it works air-gapped.
 *
 * The server puts the handler in front of its routes:
 *
 * ```ts
 * const graphiql = createGraphiQLHandler({ endpointPath: '/graphql' });
 * // in the request listener, first:
 * if (graphiql(req, res, url)) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { perBackendHeader } from '../../adapters/contract/module';
import { BACKEND_MODULES } from '../kinds';
import { prefersHtml } from './accept';
import { loadAssets, serveAsset } from './assets';
import { CONTENT_SECURITY_POLICY, notBuiltPage, renderPage } from './page';
import { defaultAssetsDir, defaultReadmePath } from './paths';
import { readmeTabs, type GraphiQLTab } from './readme-tabs';

export type { GraphiQLTab } from './readme-tabs';
export { prefersHtml } from './accept';
export { tabsFromMarkdown } from './readme-tabs';

/**
 * Shown in the headers editor: comments only, so nothing is sent until the user fills it in. One
 * block per backend kind, from its module's credential (the first block says which header wins).
 */
export const DEFAULT_HEADERS = ((): string => {
  const lines = BACKEND_MODULES.flatMap(({ displayName, credential: c }, i) => {
    const value = JSON.stringify(c.placeholder ?? '<token>');
    return [
      `  // ${c.describe}, for every ${displayName} backend or one${i === 0 ? ' (the latter wins)' : ''}:`,
      `  // ${JSON.stringify(c.header)}: ${value},`,
      `  // ${JSON.stringify(perBackendHeader(c, '<backend-id>'))}: ${value},`,
    ];
  });
  const last = lines.length - 1;
  if (last >= 0) lines[last] = lines[last]!.replace(/,$/, '');
  return ['{', '  // Your credentials pass through to the backends: uncomment what you need.', ...lines, '}'].join(
    '\n',
  );
})();

export const DEFAULT_QUERY = `# The gateway's backends. Ctrl-Enter runs, Ctrl-Space completes.
{
  storageBackends { id kind requiresCredential health { status } }
}
`;

export interface GraphiQLHandlerOptions {
  /** Path of the GraphQL endpoint: the page is served there and queries (HTTP) and subscriptions (graphql-ws) go there. @default '/graphql' */
  endpointPath?: string;
  /** Operation of a new tab, and of the only tab when there are no `tabs`. @default {@link DEFAULT_QUERY} */
  defaultQuery?: string;
  /** Headers editor's content (JSON with comments) for tabs that bring none. @default {@link DEFAULT_HEADERS} */
  defaultHeaders?: string;
  /** Tabs open on a first visit (GraphiQL keeps the user's tabs in localStorage after that). @default one per ```graphql block of `readmePath` */
  tabs?: GraphiQLTab[];
  /** README to take `tabs` from. @default the package's README.md */
  readmePath?: string;
  /** Folder with the built bundle and its manifest.json. @default dist/server/graphiql/assets */
  assetsDir?: string;
  /** URL path the assets are served under (no trailing slash). @default '/graphiql/assets' */
  assetsPath?: string;
  /** Page title. @default 'GraphiQL · volume gateway' */
  title?: string;
}

/** Answers the request and returns true, or returns false without touching `res`. */
export type GraphiQLHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

/**
 * Reads the bundle and the README once, at start-up. When the bundle has not been built the
 * handler still answers browsers, with a page saying how to build it, and the API is unaffected.
 */
export function createGraphiQLHandler(options: GraphiQLHandlerOptions = {}): GraphiQLHandler {
  const endpointPath = options.endpointPath ?? '/graphql';
  const assetsPath = (options.assetsPath ?? '/graphiql/assets').replace(/\/+$/, '');
  const title = options.title ?? 'GraphiQL · volume gateway';
  const defaultHeaders = options.defaultHeaders ?? DEFAULT_HEADERS;
  const assets = loadAssets(options.assetsDir ?? defaultAssetsDir());
  const tabs = options.tabs ?? readmeTabs(options.readmePath ?? defaultReadmePath(), defaultHeaders);
  const html = assets
    ? renderPage({
        title,
        assetsPath,
        manifest: assets.manifest,
        config: { endpointPath, defaultQuery: options.defaultQuery ?? DEFAULT_QUERY, defaultHeaders, tabs },
      })
    : notBuiltPage(title);
  const page = Buffer.from(html, 'utf8');

  return (req, res, url) => {
    const readOnly = req.method === 'GET' || req.method === 'HEAD';
    if (url.pathname.startsWith(`${assetsPath}/`)) {
      if (!readOnly) {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        res.end('method not allowed\n');
        return true;
      }
      serveAsset(assets, url.pathname.slice(assetsPath.length + 1), req, res);
      return true;
    }
    // Only a browser's navigation: POSTs, and GETs asking for JSON, are GraphQL requests.
    if (url.pathname !== endpointPath || !readOnly || !prefersHtml(req.headers.accept)) return false;
    res.writeHead(assets ? 200 : 503, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': page.length,
      // The page names the current hashed bundle: always revalidate it.
      'cache-control': 'no-cache',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      vary: 'accept',
    });
    res.end(req.method === 'HEAD' ? undefined : page);
    return true;
  };
}
