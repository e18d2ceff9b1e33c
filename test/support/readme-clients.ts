/**
 * The README's two JavaScript clients, run as written against a URL (the gateway's, or a router's
 * in front of it): the HTTP client that attaches a volume and waits for the operation, and the
 * graphql-ws client that follows `volumeChanged` and resumes from its cursor. Only the URL is
 * replaced, and the `import` lines of the graphql-ws client, whose bindings are passed in.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const jsBlocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The JavaScript client over HTTP: the first ```js block. */
export const README_HTTP_CLIENT = jsBlocks[0];
/** The graphql-ws client: the ```js block that imports graphql-ws. */
export const README_WS_CLIENT = jsBlocks.find((b) => b.includes("from 'graphql-ws'"));

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
  ...args: string[]
) => (...a: unknown[]) => Promise<unknown>;

/** The credentials the README's clients read from the environment. */
export interface ReadmeEnv {
  OS_TOKEN: string;
  NOMAD_TOKEN: string;
}

/** Runs the README's HTTP client at `url` (`http://…/graphql`); answers the operation it waited for. */
export async function runReadmeHttpClient(
  url: string,
  volumeId: string,
  serverId: string,
  env: ReadmeEnv,
): Promise<unknown> {
  const run = new AsyncFunction(
    'volumeId',
    'serverId',
    'process',
    `${README_HTTP_CLIENT!.replace('http://localhost:4000/graphql', url)}\nreturn op;`,
  );
  return run(volumeId, serverId, { env });
}

/** The README's graphql-ws client, following. */
export interface RunningReadmeWsClient {
  /** What it logged, one line per `console.log`, trimmed. */
  readonly logs: string[];
  /** Clears its reconnect timers and disposes its current client. */
  stop(): Promise<void>;
}

/** Starts the README's graphql-ws client at `wsUrl` (`ws://…/graphql`). */
export async function runReadmeWsClient(wsUrl: string, env: ReadmeEnv): Promise<RunningReadmeWsClient> {
  const logs: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const trackedTimeout = (f: () => void, ms: number): NodeJS.Timeout => {
    const t = setTimeout(() => (timers.delete(t), f()), ms);
    timers.add(t);
    return t;
  };
  const body = README_WS_CLIENT!.replace(/^import .*$/gm, '').replace('ws://localhost:4000/graphql', wsUrl);
  const current = (await new AsyncFunction(
    'createClient',
    'WebSocket',
    'process',
    'console',
    'setTimeout',
    `${body}\nreturn () => client;`,
  )(
    createClient,
    WebSocket,
    { env },
    { log: (...a: unknown[]) => void logs.push(a.map(String).join(' ').trim()) },
    trackedTimeout,
  )) as () => Client;
  return {
    logs,
    async stop() {
      timers.forEach((t) => clearTimeout(t));
      await current().dispose();
    },
  };
}
