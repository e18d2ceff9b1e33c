/**
 * A compute team's subgraph, as a company beside the volume gateway would run it: it owns Nova
 * servers and the hosts they run on, keyed by id, so the gateway's subgraph can contribute volume
 * attachments to `Server`. Seeded from the test's data; counts what it is asked.
 *
 * Root fields are named `inventory…` so they cannot collide with the gateway's own root fields.
 */
import { startSubgraphServer, type RunningSubgraph, type SubgraphResolvers } from './subgraph-server';

/** A hypervisor host. */
export interface HostSeed {
  id: string;
  name: string;
}

/** A Nova server. */
export interface ServerSeed {
  /** The Nova server UUID: the entity key other subgraphs use. */
  id: string;
  name: string;
  /** Nova's status word. @default 'ACTIVE' */
  status?: string;
  /** The host it runs on. @default none (`host: null`, as for a server not scheduled yet) */
  host?: HostSeed;
}

/** The compute subgraph's SDL (Federation 2.9). */
export const COMPUTE_TYPE_DEFS = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])

type Query {
  "Every server in the inventory, in seed order."
  inventoryServers: [Server!]!
  "One server by Nova UUID, or null."
  inventoryServer(id: ID!): Server
  "Every host that runs a server."
  inventoryHosts: [Host!]!
}

"A Nova server, owned by the compute team."
type Server @key(fields: "id") {
  "Nova server UUID."
  id: ID!
  name: String!
  "Nova status (ACTIVE, SHUTOFF …)."
  status: String!
  host: Host
}

"A hypervisor host."
type Host @key(fields: "id") {
  id: ID!
  name: String!
}
`;

interface ServerRow {
  id: string;
  name: string;
  status: string;
  hostId: string | null;
}

/** A running compute subgraph; servers (and their hosts) may be added after start. */
export interface ComputeSubgraph extends RunningSubgraph {
  addServer(seed: ServerSeed): void;
}

/** Starts the compute subgraph on a free loopback port, seeded with `servers`. */
export async function startComputeSubgraph(servers: readonly ServerSeed[], name = 'compute'): Promise<ComputeSubgraph> {
  const serverRows = new Map<string, ServerRow>();
  const hosts = new Map<string, HostSeed>();
  const addServer = (s: ServerSeed): void => {
    if (s.host) hosts.set(s.host.id, { ...s.host });
    serverRows.set(s.id, { id: s.id, name: s.name, status: s.status ?? 'ACTIVE', hostId: s.host?.id ?? null });
  };
  servers.forEach(addServer);

  const resolvers: SubgraphResolvers = {
    Query: {
      inventoryServers: () => [...serverRows.values()],
      inventoryServer: (_: unknown, args: { id: string }) => serverRows.get(args.id) ?? null,
      inventoryHosts: () => [...hosts.values()],
    },
    Server: {
      // An unknown id resolves to null, as a real subgraph answers for a deleted server.
      __resolveReference: (ref: { id: string }) => serverRows.get(ref.id) ?? null,
      host: (s: ServerRow) => (s.hostId === null ? null : (hosts.get(s.hostId) ?? null)),
    },
    Host: {
      __resolveReference: (ref: { id: string }) => hosts.get(ref.id) ?? null,
    },
  };
  const running = await startSubgraphServer({ name, typeDefs: COMPUTE_TYPE_DEFS, resolvers });
  return { ...running, addServer };
}
