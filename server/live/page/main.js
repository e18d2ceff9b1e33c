/**
 * Browser entry of the live status page (bundled by scripts/build-live.ts with esbuild; never
 * loaded by Node). Plain JavaScript, as GraphiQL's client, because the gateway's `tsc` has no DOM
 * lib; the table's logic is in state.ts and unit-tested.
 *
 * It lists volumes over HTTP (POST /graphql), then follows `volumeChanged` over graphql-ws on the
 * same URL, headers in `connection_init`. A dropped socket is reopened with `since` = the last
 * cursor, so nothing is missed; CURSOR_EXPIRED means the gap is too old: list again, subscribe
 * without `since`.
 */
import { createClient } from 'graphql-ws';
import './page.css';
import { coverage, consumerLabel, lacksNames, LiveTable } from './state';
import {
  LIST_QUERY,
  MAX_LIST_PAGES,
  PROBLEMS_QUERY,
  PROBLEM_SUBSCRIPTION,
  SUBSCRIPTION,
  VOLUME_QUERY,
} from './queries';
import { ProblemsPanel } from './problems.js';
import { backoffMs, describeClose, errorCodes, FATAL_CLOSE_CODES, FATAL_ERROR_CODES } from './connection';

/** Written by server/live/page.ts as JSON; see `LivePageConfig` there. */
const config = JSON.parse(document.getElementById('live-config').textContent);
const endpoint = new URL(config.endpointPath, location.href);
const wsUrl = new URL(endpoint);
wsUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';

/** Tokens stay in this tab only (sessionStorage), never in localStorage. */
const STORAGE_KEY = 'volume-gateway:live:headers';
/** How long a changed row stays highlighted. */
const HIGHLIGHT_MS = 2_000;
const MAX_LOG = 30;
/** Events of one attach come in a burst (ATTACHING, ATTACHED): one re-read after it settles. */
const NAME_READ_DEBOUNCE_MS = 300;

const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
};

const table = new LiveTable();
const problems = new ProblemsPanel($('problems'), $('problem-count'), config.endpointPath);
let headers = readHeaders();
let cursor = null;
let listOmitted = [];
let subscribedOmitted = null;
let client;
let generation = 0;
let attempt = 0;
let retryTimer;
let highlightTimer;
/** Volume ids whose consumer names an event left out, read again once the debounce fires. */
const nameReads = new Set();
let nameTimer;
/** Bumped by every start() (new list, perhaps new credentials). */
let credentialsEpoch = 0;

function readHeaders() {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (stored) {
    try {
      return JSON.parse(stored);
    } catch {
      sessionStorage.removeItem(STORAGE_KEY);
    }
  }
  return config.defaultHeaders ?? {};
}

function setConnection(state, detail) {
  const c = $('connection');
  c.dataset.state = state;
  c.textContent = detail ? `${state}: ${detail}` : state;
}

function setNotice(text) {
  $('notice').textContent = text ?? '';
  $('notice').hidden = !text;
}

function renderCoverage() {
  const omitted = subscribedOmitted ?? listOmitted;
  $('coverage').textContent = `Coverage: ${coverage(omitted)}`;
  $('coverage').dataset.complete = String(omitted.length === 0);
}

function badge(kind, value) {
  const b = el('span', `badge ${kind}`, value);
  b.dataset.state = value;
  return b;
}

function render() {
  const now = Date.now();
  const body = el('tbody');
  let next = Infinity;
  for (const row of table.list()) {
    const v = row.volume;
    const tr = el('tr');
    tr.dataset.volumeId = v.id;
    tr.dataset.nativeId = v.nativeId;
    tr.dataset.backend = v.backend.id;
    if (row.changedAt !== undefined && now - row.changedAt < HIGHLIGHT_MS) {
      tr.classList.add('changed');
      next = Math.min(next, row.changedAt + HIGHLIGHT_MS - now);
    }
    const namespace = el('td', 'namespace', table.namespaceLabel(v));
    // A named namespace (an OpenStack project) keeps its id on hover.
    if (v.namespace && namespace.textContent !== v.namespace) namespace.title = v.namespace;
    tr.append(el('td', 'backend', v.backend.id), namespace);
    const name = el('td', 'name', v.name ?? v.nativeId);
    if (v.name && v.name !== v.nativeId) name.append(el('small', 'native', v.nativeId));
    tr.append(name);
    const status = el('td', 'status');
    status.append(badge('status', v.status));
    tr.append(status);
    const atts = el('td', 'attachments');
    if (v.attachments === null) atts.append(el('span', 'unknown', 'not readable'));
    for (const a of v.attachments ?? []) {
      const item = el('span', 'attachment-item');
      item.dataset.attachmentId = a.id;
      const who = el('span', 'consumer', consumerLabel(a.consumer));
      // The server's id on hover only: the label waits for its name (state.ts, NAME_LOADING).
      if (a.consumer?.serverId) who.title = `server id ${a.consumer.serverId}`;
      item.append(badge('attachment', a.state), who);
      atts.append(item);
    }
    tr.append(atts, el('td', 'event', row.lastEvent ?? ''));
    body.append(tr);
  }
  $('volumes').querySelector('tbody').replaceWith(body);
  $('count').textContent = `${table.size} volumes`;
  clearTimeout(highlightTimer);
  if (next !== Infinity) highlightTimer = setTimeout(render, next + 20);
}

function log(event) {
  const li = el(
    'li',
    '',
    `${new Date(event.observedAt).toLocaleTimeString()} ${event.type} ${event.volume?.name ?? event.volume?.nativeId ?? event.volumeId ?? ''}${event.volume ? ` (${event.volume.backend.id})` : ''}`,
  );
  li.dataset.type = event.type;
  const list = $('events');
  list.prepend(li);
  while (list.children.length > MAX_LOG) list.lastElementChild.remove();
}

/**
 * Events are served from the watcher's view and never read Nova, so a new attachment arrives
 * without its server's name. Re-read those volumes over HTTP with the page's own credentials
 * (one `volume(id:)` each, debounced) and fill the names in.
 */
function readNamesLater(id) {
  nameReads.add(id);
  clearTimeout(nameTimer);
  nameTimer = setTimeout(readNames, NAME_READ_DEBOUNCE_MS);
}

async function readNames() {
  const ids = [...nameReads];
  nameReads.clear();
  const epoch = credentialsEpoch;
  const reads = await Promise.allSettled(ids.map((id) => post(VOLUME_QUERY, { id })));
  if (epoch !== credentialsEpoch) return; // listed again meanwhile, perhaps with other tokens
  let changed = false;
  for (const r of reads)
    if (r.status === 'fulfilled' && r.value.data.volume) changed = table.fillNames(r.value.data.volume) || changed;
  if (changed) render();
}

async function post(query, variables) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json().catch(() => ({}));
  if (!body.data) throw new Error(body.errors?.map((e) => e.message).join('; ') || `HTTP ${res.status}`);
  return body;
}

/** Every page of `volumes`, then a fresh table. */
async function relist() {
  $('list-status').textContent = 'listing…';
  const nodes = [];
  const omitted = new Map();
  let backends = [];
  let after = null;
  for (let i = 0; i < MAX_LIST_PAGES; i++) {
    const { data } = await post(LIST_QUERY, { after });
    // Null when the field failed (an expired token): ids are shown then.
    if (i === 0) backends = data.storageBackends ?? [];
    for (const n of data.volumes.nodes) if (n) nodes.push(n);
    for (const o of data.volumes.omittedBackends) omitted.set(o.backend.id, o);
    if (!data.volumes.pageInfo.hasNextPage) break;
    after = data.volumes.pageInfo.endCursor;
  }
  listOmitted = [...omitted.values()];
  table.replace(nodes, backends);
  $('list-status').textContent = `listed at ${new Date().toLocaleTimeString()}`;
  renderCoverage();
  render();
  await refreshProblems();
}

/** The doctor's open problems again (at each list and each new subscription: events missed meanwhile are covered). */
async function refreshProblems() {
  const epoch = credentialsEpoch;
  try {
    const { data } = await post(PROBLEMS_QUERY);
    if (epoch === credentialsEpoch) problems.replace(data.volumeProblems.nodes);
  } catch (e) {
    $('problems-status').textContent = `problems unavailable: ${e.message}`;
  }
}

function scheduleRetry(reason) {
  clearTimeout(retryTimer);
  const wait = backoffMs(attempt++);
  setConnection('reconnecting', `${reason}; retry in ${Math.round(wait / 100) / 10} s`);
  retryTimer = setTimeout(subscribe, wait);
}

function subscribe() {
  const gen = ++generation;
  client?.dispose();
  setConnection('connecting');
  client = createClient({
    url: wsUrl.href,
    retryAttempts: 0,
    connectionParams: headers,
    on: { connected: () => gen === generation && setConnection('live') },
  });
  client.subscribe(
    { query: PROBLEM_SUBSCRIPTION },
    {
      next: (result) => {
        if (gen !== generation) return;
        const event = result.data?.volumeProblemChanged;
        // Listed again on every (re)subscription: what opened or resolved while away is covered.
        if (event?.type === 'SUBSCRIBED') return void refreshProblems();
        problems.apply(event);
      },
      // The volume subscription's handlers report and retry; this one follows the same socket.
      error: () => undefined,
      complete: () => undefined,
    },
  );
  client.subscribe(
    { query: SUBSCRIPTION, variables: { since: cursor } },
    {
      next: (result) => {
        if (gen !== generation) return;
        const event = result.data?.volumeChanged;
        // The gateway refuses a subscription it cannot start (CURSOR_EXPIRED, an expired token) with
        // one result carrying only errors, then completes: handled as graphql-ws `error` messages are.
        if (!event) return void (result.errors ? ended(result.errors) : undefined);
        attempt = 0;
        cursor = event.cursor;
        if (event.type === 'SUBSCRIBED') {
          subscribedOmitted = event.omittedBackends;
          setConnection('live');
          return renderCoverage();
        }
        log(event);
        const changed = table.apply(event, Date.now());
        if (changed === undefined) return;
        render();
        if (lacksNames(table.get(changed)?.volume)) readNamesLater(changed);
      },
      error: (err) => gen === generation && ended(err),
      complete: () => gen === generation && scheduleRetry('the server ended the subscription'),
    },
  );

  /** The subscription failed or was refused; `err` is what graphql-ws hands the error sink (or a result's errors). */
  function ended(err) {
    generation++; // the `complete` that follows a refusal must not schedule a second retry
    const codes = errorCodes(err);
    if (codes.includes('CURSOR_EXPIRED')) {
      // Too far behind: what was missed is gone from the log. Start over from a fresh list.
      cursor = null;
      setNotice('Missed too much while away: listed again.');
      return void relist().then(subscribe, (e) => scheduleRetry(e.message));
    }
    const fatal = typeof err?.code === 'number' && FATAL_CLOSE_CODES.has(err.code);
    if (fatal || codes.some((c) => FATAL_ERROR_CODES.has(c))) {
      client.dispose();
      return setConnection('stopped', `${describeClose(err)}: check the credentials and press Apply`);
    }
    scheduleRetry(describeClose(err));
  }
}

async function start() {
  clearTimeout(retryTimer);
  generation++;
  client?.dispose();
  cursor = null;
  subscribedOmitted = null;
  credentialsEpoch++;
  clearTimeout(nameTimer);
  nameReads.clear();
  setNotice();
  try {
    await relist();
  } catch (e) {
    $('list-status').textContent = `list failed: ${e.message}`;
  }
  subscribe();
}

function setupCredentials() {
  const area = $('headers');
  area.value = JSON.stringify(headers, null, 2);
  $('demo-note').hidden = !config.demo;
  $('credentials').addEventListener('submit', (ev) => {
    ev.preventDefault();
    try {
      const parsed = JSON.parse(area.value || '{}');
      if (
        typeof parsed !== 'object' ||
        parsed === null ||
        Array.isArray(parsed) ||
        Object.values(parsed).some((v) => typeof v !== 'string')
      )
        throw new Error('an object of header names to string values');
      headers = parsed;
      sessionStorage.setItem(STORAGE_KEY, JSON.stringify(headers));
      $('headers-error').textContent = '';
      void start();
    } catch (e) {
      $('headers-error').textContent = `Headers must be JSON: ${e.message}`;
    }
  });
}

setupCredentials();
void start();
