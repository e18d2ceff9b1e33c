/**
 * The watcher's two long calls, read on its own connection (`connection.ts`) or with the
 * service token: the event stream and the blocking volume list.
 */
import type { NomadCall } from '../client';
import { listVolumesURL } from '../volumes/urls';
import { eventStreamURL } from './urls';

/**
 * `GET /v1/event/stream?topic=…&namespace=*&index=N` (hashicorp/nomad
 * command/agent/event_endpoint.go; Nomad's API docs, events): ndjson, read by the watcher's own
 * connection (`connection.ts`), never the pool.
 */
export function eventStreamCall(topics: readonly string[], index: number): NomadCall {
  const q = new URLSearchParams({ namespace: '*', index: String(index) });
  for (const t of topics) q.append('topic', t);
  return {
    method: 'GET',
    path: eventStreamURL(),
    endpoint: 'GET /v1/event/stream',
    query: q,
    action: 'following the event stream',
  };
}

/**
 * The volume list in every namespace as a blocking query (hashicorp/nomad nomad/rpc.go
 * `blockingRPC`; Nomad's API docs, "Blocking Queries"): answers once the table index passes
 * `index`, or after `waitMs` (plus Nomad's jitter of up to 1/16) unchanged.
 */
export function blockingListCall(index: number, waitMs: number): NomadCall {
  const q = new URLSearchParams({
    type: 'csi',
    namespace: '*',
    index: String(index),
    wait: `${Math.max(1, Math.round(waitMs))}ms`,
  });
  return {
    method: 'GET',
    path: listVolumesURL(),
    endpoint: 'GET /v1/volumes',
    query: q,
    action: 'watching the volume list',
  };
}
