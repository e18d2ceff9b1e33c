/**
 * Browser entry of the bundled GraphiQL page (bundled by scripts/build-graphiql.ts with
 * esbuild; never loaded by Node). Plain JavaScript without JSX so that the gateway's `tsc`
 * (no DOM lib, no JSX) neither compiles nor checks it.
 *
 * Everything the page needs comes from this bundle, its CSS and the worker files beside it:
 * nothing is fetched from a CDN, so the IDE works air-gapped.
 */
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import 'graphiql/style.css';
import './page.css';
import { createFetcher } from './fetcher.js';
import { installMonacoWorkers } from './workers.js';

/** Written by server/graphiql/page.ts as JSON; see `PageConfig` there. */
const config = JSON.parse(document.getElementById('graphiql-config').textContent);

installMonacoWorkers(config.workers);

const endpoint = new URL(config.endpointPath, location.href);
const ws = new URL(endpoint);
ws.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
const fetcher = createFetcher(endpoint.href, ws.href);

/**
 * `?query=…&variables=…` opens a tab with that operation (the live page's remedy links send a
 * remedy's mutation this way); without them, the configured tabs as before.
 */
const params = new URLSearchParams(location.search);
const linked = params.get('query');

createRoot(document.getElementById('graphiql')).render(
  createElement(GraphiQL, {
    fetcher,
    defaultQuery: config.defaultQuery,
    defaultHeaders: config.defaultHeaders,
    defaultTabs: config.tabs.length > 0 ? config.tabs : undefined,
    ...(linked ? { initialQuery: linked, initialVariables: params.get('variables') ?? '' } : {}),
    // Tokens typed into the headers editor stay out of localStorage unless the user opts in.
    shouldPersistHeaders: false,
  }),
);
