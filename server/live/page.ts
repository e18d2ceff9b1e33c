/**
 * The live status page's HTML shell: links the hashed bundle, passes the configuration as inert
 * JSON, and sets a Content-Security-Policy allowing its own origin only (no inline script or
 * style, no CDN), so the browser itself enforces that the page works air-gapped.
 */
import type { LiveManifest } from './manifest';
import { BACKEND_MODULES } from '../kinds';
import { escapeHtml, scriptJson } from '../html';

/** The credential headers the page accepts, from the backends' modules: `<code>X-&lt;Kind&gt;-Token[-&lt;backend&gt;]</code>, …`. */
const CREDENTIAL_HELP = BACKEND_MODULES.map(
  (m) => `<code>${escapeHtml(m.credential.header)}[-&lt;backend&gt;]</code>`,
).join(', ');

/** What server/live/page/main.js reads from the page. */
export interface LivePageConfig {
  /** GraphQL endpoint: the list goes there over HTTP, the subscription over graphql-ws. */
  endpointPath: string;
  /** Headers the page sends until the user sets others (demo mode: the demo's tokens); null for none. */
  defaultHeaders: Record<string, string> | null;
  /** Demo mode: say the pre-filled tokens are the demo's. */
  demo: boolean;
}

/** `connect-src 'self'` covers the same-origin `ws:`/`wss:` socket too (CSP 3). */
export const LIVE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function renderLivePage(o: {
  title: string;
  assetsPath: string;
  manifest: LiveManifest;
  config: LivePageConfig;
}): string {
  const url = (file: string): string => escapeHtml(`${o.assetsPath}/${file}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(o.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${url(o.manifest.files.style)}">
<script id="live-config" type="application/json">${scriptJson(o.config)}</script>
<script defer src="${url(o.manifest.files.script)}"></script>
</head>
<body>
<header>
<h1>${escapeHtml(o.title)}</h1>
<span id="connection" data-state="connecting">connecting</span>
<span id="coverage">Coverage: …</span>
<span id="count"></span>
<span id="list-status"></span>
<a href="${escapeHtml(o.config.endpointPath)}">GraphiQL</a>
</header>
<main>
<div>
<p id="notice" hidden></p>
<table id="volumes">
<thead><tr><th>Backend</th><th>Namespace / project</th><th>Volume</th><th>Status</th><th>Attachments</th><th>Last change</th></tr></thead>
<tbody></tbody>
</table>
</div>
<aside>
<section id="problems-panel">
<h2>Problems <span id="problem-count"></span></h2>
<p id="problems-status"></p>
<ul id="problems"></ul>
</section>
<section>
<h2>Recent changes</h2>
<ol id="events"></ol>
</section>
<section>
<h2>Credentials</h2>
<form id="credentials">
<p id="demo-note" hidden>Demo mode: the demo's tokens are filled in (demo data only).</p>
<label for="headers">Headers (JSON), as for POST /graphql: ${CREDENTIAL_HELP}. Kept in this tab only.</label>
<textarea id="headers" spellcheck="false" autocomplete="off"></textarea>
<p id="headers-error"></p>
<button type="submit">Apply</button>
</form>
</section>
</aside>
</main>
</body>
</html>
`;
}

/** Shown when the bundle has not been built. */
export function liveNotBuiltPage(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>The live status page is not built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload.</p>
</body></html>
`;
}
