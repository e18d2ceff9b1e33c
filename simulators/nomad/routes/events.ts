/**
 * `GET /v1/event/stream` (hashicorp/nomad command/agent/event_endpoint.go,
 * nomad/event_endpoint.go, nomad/stream/*): newline-delimited JSON, a `{}` heartbeat first and
 * then every `eventHeartbeatMs` (Nomad: 30 s), and `{"Index":N,"Events":[…]}` frames filtered by
 * topic, key (Key or FilterKeys) and namespace.
 */
import type { Acl, NsCapability } from '../acl';
import type { BufferItem } from '../broker';
import { atoi, GoParseError } from '../golang';
import { qget, rpcAuth, rpcErrorResult, type HandlerResult, type SimContext, type SimRequest } from '../http';
import { PERMISSION_DENIED, RpcError } from '../state';
import type { BodyWriter } from '../server-io';

/** Topics → required namespace capability; anything else (including `*`) needs management. */
const TOPIC_CAPS: Record<string, NsCapability> = {
  Deployment: 'read-job',
  Evaluation: 'read-job',
  Allocation: 'read-job',
  Job: 'read-job',
  Service: 'read-job',
  CSIPlugin: 'read-job',
  CSIVolume: 'csi-read-volume',
  HostVolume: 'host-volume-read',
};

/** `parseEventTopics`: `Topic` ≡ `Topic:*`; more than one `:` is a 400. */
function parseTopics(req: SimRequest): Map<string, string[]> | HandlerResult {
  const raw = req.query.get('topic');
  if (raw === undefined) return new Map([['*', ['*']]]);
  const topics = new Map<string, string[]>();
  for (const t of raw) {
    const parts = t.split(':');
    let k: string;
    let v: string;
    if (parts.length === 1) {
      k = t;
      v = '*';
    } else if (parts.length === 2) {
      k = parts[0]!;
      v = parts[1]!;
    } else {
      return {
        kind: 'error',
        status: 400,
        text: `Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: ${t}`,
      };
    }
    topics.set(k, [...(topics.get(k) ?? []), v]);
  }
  return topics;
}

/** `validateACL`: with `namespace=*` every existing namespace must pass, else 403. */
function validateACL(ctx: SimContext, acl: Acl, namespace: string, topics: Map<string, string[]>): string[] | null {
  const nses = namespace === '*' ? [...ctx.state.namespaces.keys()] : [namespace];
  for (const ns of nses) {
    for (const topic of topics.keys()) {
      const cap = TOPIC_CAPS[topic];
      const ok = cap ? acl.allowNsOp(ns, cap) : acl.management;
      if (!ok) return null;
    }
  }
  return nses;
}

/**
 * Starts the stream. Returns a HandlerResult for errors answered before streaming starts;
 * otherwise takes over the response (`streamed`).
 */
export function eventStream(ctx: SimContext, req: SimRequest, open: () => BodyWriter): HandlerResult {
  let index: number;
  try {
    index = atoi(qget(req, 'index') || '0');
  } catch (e) {
    if (!(e instanceof GoParseError)) throw e;
    return { kind: 'error', status: 400, text: `Unable to parse index: ${e.message}` };
  }
  const topics = parseTopics(req);
  if (!(topics instanceof Map)) return topics;
  const namespace = qget(req, 'namespace') || 'default';
  const region = qget(req, 'region') || ctx.region;
  let nses: string[];
  try {
    const acl = rpcAuth(ctx, req, region);
    const ok = validateACL(ctx, acl, namespace, topics);
    if (!ok) throw new RpcError(PERMISSION_DENIED);
    nses = ok;
  } catch (e) {
    return rpcErrorResult(e);
  }

  const w = open();
  const allowedNs = new Set(nses);
  const send = (line: string): void => {
    w.write(line + '\n');
    w.flush();
  };
  send('{}');
  const heartbeat = setInterval(() => send('{}'), ctx.eventHeartbeatMs);

  const deliver = (item: BufferItem): void => {
    const selected: string[] = [];
    for (const { event, json } of item.events) {
      const keys = topics.has('*') ? topics.get('*') : topics.get(event.Topic);
      if (!keys) continue;
      // Namespaces are fixed at subscribe time (`*` = the namespaces that existed then).
      if (event.Namespace !== '' && !allowedNs.has(event.Namespace)) continue;
      if (keys.some((k) => k === '*' || k === event.Key || (event.FilterKeys ?? []).includes(k))) selected.push(json);
    }
    if (selected.length === 0) return;
    send(`{"Index":${item.Index},"Events":[${selected.join(',')}]}`);
  };
  // Deliver what is buffered only after the first heartbeat, as Nomad's stream does.
  const sub = ctx.state.broker.subscribe(Math.max(0, index), deliver);

  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    sub.close();
    untrack();
    w.end();
  };
  const untrack = ctx.trackStream(end);
  req.raw.on('close', end);
  req.res.on('close', end);
  return { kind: 'streamed' };
}
