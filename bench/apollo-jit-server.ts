/**
 * The in-memory benchmark's second reference (bench/inmemory.ts): the same schema, resolvers and
 * data as bench/jit-server.ts, served by Apollo Server 5 over `node:http`, with graphql-jit answering
 * from Apollo's `responseForOperation` hook (the gateway's own `compiledExecution` plugin) and Apollo's defaults otherwise,
 * except the two plugins the gateway also turns off: the landing page (it loads from a CDN) and
 * cache control (its per-field hook alone cost this server about four fifths of a list). No limits, no tracing, no logging, no metrics, an
 * empty context. What it leaves of graphql-jit's throughput is what Apollo's request pipeline
 * alone costs: the ceiling of any request path that goes through Apollo.
 *
 *   node .bench-build/bench/apollo-jit-server.js   (bench/inmem-build.ts compiles it; env: JIT_VOLUMES, JIT_ATTACHMENTS)
 *
 * Prints `APOLLO_URL=http://127.0.0.1:<port>/graphql` when it listens.
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { compiledExecution } from '../server/execution/compiled';
import { headerMapOf, sendHTTPGraphQLResponse } from '../server/http/respond';
import { jitSchema, jitVolumes, readBody } from './jit-server';

async function main(): Promise<void> {
  const schema = jitSchema(
    jitVolumes(
      process.env.JIT_BACKEND ?? 'lab',
      Number(process.env.JIT_VOLUMES ?? 100),
      Number(process.env.JIT_ATTACHMENTS ?? 2),
    ),
  );
  const apollo = new ApolloServer({
    schema,
    plugins: [
      compiledExecution(schema),
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
    ],
  });
  await apollo.start();
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Apollo answers the unparsed text with its own 400.
    }
    const r = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers: headerMapOf(req.headers), search: '', body },
      context: async () => ({}),
    });
    await sendHTTPGraphQLResponse(res, r);
  };
  // A request that fails (its client gone mid-body) ends its own socket, not the server.
  const server = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`APOLLO_URL=http://127.0.0.1:${port}/graphql\n`);
  });
}

if (require.main === module) void main();
