/**
 * The in-memory benchmark's reference server (bench/inmemory.ts): plain `node:http` and
 * graphql-jit serving the gateway's shape for the types the benchmark's queries touch, over the
 * same data as the gateway's memory backend (its own seed generator, its own attachment mapping).
 * Per request it does what a minimal honest server does: read the body, `JSON.parse`, look up the
 * compiled query by its text (parse, validate and compile once per document, as graphql-jit users
 * do), execute, stringify, write. No limits, no tracing, no logging, no metrics.
 *
 *   node .bench-build/bench/jit-server.js   (bench/inmem-build.ts compiles it; env: JIT_VOLUMES, JIT_ATTACHMENTS)
 *
 * Prints `JIT_URL=http://127.0.0.1:<port>/graphql` when it listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { buildSchema, parse, validate, GraphQLScalarType, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { SafeIntResolver } from 'graphql-scalars';
import { generateSeed } from '../adapters/memory/data/seed';
import { attachmentModel } from '../adapters/memory/data/store';
import { encodeGlobalId } from '../adapters/contract/ids';

/**
 * The gateway's SDL (schema/*.graphql) for the fields the benchmark reads: same names, types and
 * nullability (bench/inmemory.ts checks each field against the published schema before loading).
 */
export const JIT_SDL = /* GraphQL */ `
scalar SafeInt
scalar DateTime
enum VolumeStatus { CREATING AVAILABLE RESERVED ATTACHING IN_USE DETACHING EXTENDING DELETING MAINTENANCE BUSY UNAVAILABLE ERROR UNKNOWN }
enum VolumeAttachmentState { ATTACHING ATTACHED DETACHING DETACHED ERROR }
enum VolumeAttachmentAccess { READ_ONLY READ_WRITE }
type VolumeHostConsumer { id: ID! hostName: String }
union VolumeConsumer = VolumeHostConsumer
type VolumeAttachment {
  id: ID!
  state: VolumeAttachmentState!
  access: VolumeAttachmentAccess!
  consumer: VolumeConsumer!
  device: String
  attachedAt: DateTime
}
type Volume {
  id: ID!
  namespace: String!
  nativeId: String!
  name: String!
  status: VolumeStatus!
  backendStatus: String
  sizeBytes: SafeInt
  createdAt: DateTime
  updatedAt: DateTime
  attachments: [VolumeAttachment!]
}
type VolumeConnection { nodes: [Volume]! }
type Query {
  volumes(first: Int = 50, after: String): VolumeConnection!
  volume(id: ID!): Volume
}
`;

/** One volume as the reference serves it: the GraphQL shape, built once at start. */
interface JitVolume {
  id: string;
  namespace: string;
  nativeId: string;
  name: string;
  status: string;
  backendStatus: string;
  sizeBytes: number;
  createdAt: string | null;
  updatedAt: string | null;
  attachments: Array<{
    id: string;
    state: string;
    access: string;
    device: string | null;
    attachedAt: string | null;
    consumer: { __typename: 'VolumeHostConsumer'; id: string; hostName: string | null };
  }>;
}

/** The memory backend's generated set (same generator, same mapping rules) as GraphQL objects of backend `backend`. */
export function jitVolumes(backend: string, volumes: number, attachmentsPerVolume: number): JitVolume[] {
  return generateSeed({ volumes, attachmentsPerVolume }).volumes.map((d) => {
    const ref = { backend, namespace: d.namespace, nativeId: d.id };
    const status = d.status ?? ((d.attachments?.length ?? 0) > 0 ? 'IN_USE' : 'AVAILABLE');
    return {
      id: encodeGlobalId({ kind: 'Volume', backend, scope: d.namespace, nativeId: d.id }),
      namespace: d.namespace,
      nativeId: d.id,
      name: d.name,
      status,
      backendStatus: status.toLowerCase(),
      sizeBytes: d.sizeBytes,
      createdAt: d.createdAt ?? null,
      updatedAt: d.updatedAt ?? d.createdAt ?? null,
      attachments: (d.attachments ?? []).map((a) => {
        const m = attachmentModel(ref, a);
        const sub = { kind: 'Attachment' as const, backend, scope: d.namespace, nativeId: d.id, subId: m.consumerId };
        return {
          id: encodeGlobalId(sub),
          state: m.state,
          access: m.access,
          device: m.device,
          attachedAt: m.attachedAt,
          consumer: {
            __typename: 'VolumeHostConsumer' as const,
            id: encodeGlobalId({ ...sub, kind: 'Consumer' }),
            hostName: a.host,
          },
        };
      }),
    };
  });
}

/** The reference schema with resolvers over `volumes`: a slice for the list, a map lookup by id. */
export function jitSchema(volumes: JitVolume[]): GraphQLSchema {
  const schema = buildSchema(JIT_SDL);
  const byId = new Map(volumes.map((v) => [v.id, v]));
  const scalars: Record<string, GraphQLScalarType> = {
    SafeInt: SafeIntResolver,
    DateTime: new GraphQLScalarType({ name: 'DateTime', serialize: (v) => v }),
  };
  for (const [name, s] of Object.entries(scalars))
    Object.assign(schema.getType(name)!, {
      serialize: s.serialize,
      parseValue: s.parseValue,
      parseLiteral: s.parseLiteral,
    });
  const query = schema.getQueryType()!.getFields();
  query.volumes!.resolve = (_root, args: { first: number }) => ({ nodes: volumes.slice(0, args.first) });
  query.volume!.resolve = (_root, args: { id: string }) => byId.get(args.id) ?? null;
  return schema;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

function main(): void {
  const schema = jitSchema(
    jitVolumes(
      process.env.JIT_BACKEND ?? 'lab',
      Number(process.env.JIT_VOLUMES ?? 100),
      Number(process.env.JIT_ATTACHMENTS ?? 2),
    ),
  );
  // Compiled once per document text; a document that fails to parse, validate or compile is answered with its errors (and not cached).
  const compiled = new Map<string, CompiledQuery>();
  const send = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return send(res, 405, '{"errors":[{"message":"POST only"}]}');
    try {
      const { query, variables, operationName } = JSON.parse(await readBody(req)) as {
        query: string;
        variables?: Record<string, unknown>;
        operationName?: string;
      };
      let c = compiled.get(query);
      if (!c) {
        const doc = parse(query);
        const errors = validate(schema, doc);
        if (errors.length > 0) return send(res, 400, JSON.stringify({ errors }));
        const r = compileQuery(schema, doc, operationName);
        if (!isCompiledQuery(r)) return send(res, 400, JSON.stringify(r));
        compiled.set(query, (c = r));
      }
      const result = await c.query(undefined, {}, variables ?? {});
      send(res, 200, c.stringify(result));
    } catch (err) {
      send(res, 400, JSON.stringify({ errors: [{ message: (err as Error).message }] }));
    }
  };
  // A request that fails (its client gone mid-body) ends its own socket, not the server.
  const server = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`JIT_URL=http://127.0.0.1:${port}/graphql\n`);
  });
}

if (require.main === module) main();
