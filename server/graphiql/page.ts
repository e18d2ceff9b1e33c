/**
 * The HTML shell of the IDE: links the hashed bundle, passes the configuration as inert JSON,
 * and sets a Content-Security-Policy that lets the page load and connect to its own origin
 * only, so the browser itself enforces "nothing from a CDN".
 */
import type { GraphiQLManifest } from './manifest';
import type { GraphiQLTab } from './readme-tabs';
import { escapeHtml, scriptJson } from '../html';

/** What server/graphiql/client/main.js reads from the page. */
export interface PageConfig {
  endpointPath: string;
  defaultQuery: string;
  defaultHeaders: string;
  tabs: GraphiQLTab[];
  workers: { editor: string; json: string; graphql: string };
}

/**
 * `'unsafe-inline'` styles: Monaco and GraphiQL set style attributes and inject <style>
 * elements at run time. `connect-src 'self'` covers same-origin `ws:`/`wss:` too (CSP 3),
 * which is what graphql-ws needs. `data:` fonts and images are GraphiQL's embedded icons.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function renderPage(o: {
  title: string;
  assetsPath: string;
  manifest: GraphiQLManifest;
  config: Omit<PageConfig, 'workers'>;
}): string {
  const url = (file: string): string => `${o.assetsPath}/${file}`;
  const { files } = o.manifest;
  const config: PageConfig = {
    ...o.config,
    workers: { editor: url(files.editorWorker), json: url(files.jsonWorker), graphql: url(files.graphqlWorker) },
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(o.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(url(files.style))}">
<script id="graphiql-config" type="application/json">${scriptJson(config)}</script>
<script defer src="${escapeHtml(url(files.script))}"></script>
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
</body>
</html>
`;
}

/** Shown to a browser when the bundle has not been built, instead of Apollo's JSON error. */
export function notBuiltPage(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>GraphiQL is not built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload. The GraphQL API itself works: POST queries to this URL.</p>
</body></html>
`;
}
