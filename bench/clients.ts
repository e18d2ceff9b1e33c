/**
 * The parent's side of the load generator (bench/fanout-clients.ts, a child process holding many
 * graphql-ws subscriptions): forking it, its IPC requests, and the subscription the fan-out and
 * heap benchmarks open.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { encodeGlobalId } from '../adapters/contract/ids';
import { root } from './processes';

/** An `open` request: connections to make, each subscribing to `query`. */
export interface Open {
  url: string;
  count: number;
  /** Loopback source addresses to spread connections over (127.0.0.x). */
  sources: string[];
  /** `connection_init` payloads (credentials), given to the connections in turn. */
  init: Array<Record<string, string>>;
  /** Connections opened at once. */
  batch: number;
  query: string;
  /** Carried by every sample these connections receive (e.g. which server they reached). @default none */
  tag?: number;
}

/** What an `open` request answers. */
export interface Opened {
  opened: number;
  failed: number;
  closes: Record<string, number>;
}

/** One received event: when (ms, epoch-based, sub-ms) and the event's cursor and observedAt. */
export interface Sample {
  at: number;
  cursor: string;
  observedAt: string;
  type: string;
  /** The `tag` of the `open` request whose connection received it. */
  tag?: number;
  /** Errors the result carried (e.g. a field past the event's read budget). */
  errors?: number;
}

/** Starts one load-generator process. */
export function forkClients(): ChildProcess {
  return fork(join(__dirname, 'fanout-clients.ts'), [], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Sends `msg` to the generator and answers its next message. */
export function ask<T>(child: ChildProcess, msg: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(msg as object);
  });
}

/** Opens connections and subscriptions; resolves once each is subscribed or failed. */
export function open(child: ChildProcess, o: Open): Promise<Opened> {
  return ask<Opened>(child, { open: o });
}

/** The fan-out benchmark's subscription: one bench volume's claims and releases, with what a UI shows of them. */
export function claimsSubscription(nativeId: string): string {
  const volumeId = encodeGlobalId({ kind: 'Volume', backend: 'bench', scope: 'default', nativeId });
  return `subscription { volumeChanged(filter: { volumeIds: ["${volumeId}"], types: [CLAIMED, RELEASED] }) { type cursor observedAt volumeId attachment { id state consumer { ... on VolumeAllocationConsumer { allocationId clientStatus } } } } }`;
}
