/**
 * The v2 SDL as a contract (docs/schema.md, docs/federation.md): everything we own is described,
 * type names follow the naming convention, entities and their keys are the documented ones, and
 * the SDL composes with other teams' subgraphs (`@apollo/composition`) with no errors and no hints.
 *
 * The SDL is the one routers see: printSubgraphSchema of server/schema.ts (scripts/schema-check.ts).
 * A failure lists what to change in schema/**\/*.graphql.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import {
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  getNamedType,
  Kind,
  parse,
  print,
} from 'graphql';
import { currentSdl } from '../../scripts/schema-check';
import { COMPUTE_TYPE_DEFS } from '../federation/compute-subgraph';
import { composeSupergraph } from '../federation/supergraph';

/** Entities other teams own; we contribute fields to them and resolve only their key. */
const OWNED_BY_OTHERS: Record<string, { owner: string; key: string }> = {
  Server: { owner: 'compute team (id = Nova server UUID)', key: 'id' },
  NomadNode: { owner: 'scheduler team (id = Nomad node id)', key: 'id' },
};
/** The root types every subgraph shares; their fields are ours and described, the types are not. */
const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);
/** Names we define that are shared across a supergraph by design, so they carry no domain word. */
const SHARED_NAMES: Record<string, string> = {
  PageInfo: "Relay's page info, @shareable with Relay's four fields",
  SafeInt: 'graphql-scalars scalar; scalars merge by name in a supergraph',
  DateTime: 'graphql-scalars scalar; scalars merge by name in a supergraph',
};
/** The entities this subgraph defines and resolves. */
const OUR_ENTITIES = ['Volume', 'VolumeAttachment', 'VolumeOperation', 'VolumeSnapshot'];
const BACKEND_WORD = /Nomad|Cinder|Nova/;

/** A scheduler team's subgraph: owns NomadNode, and pages the Relay way with its own shareable PageInfo. */
const SCHEDULER_TYPE_DEFS = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable"])
type Query {
  "Nomad client nodes."
  schedulerNodes(first: Int = 50, after: String): NomadNodeConnection!
}
"A Nomad client node, owned by the scheduler team."
type NomadNode @key(fields: "id") {
  "The Nomad node id."
  id: ID!
  "The node's name."
  name: String!
}
type NomadNodeEdge { node: NomadNode! cursor: String! }
type NomadNodeConnection { edges: [NomadNodeEdge!]! pageInfo: PageInfo! }
type PageInfo @shareable { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
`;

let sdl: string;
let doc: DocumentNode;
let schema: GraphQLSchema;
/** Names of the types the SDL defines or extends (federation's own types are not among them). */
let defined: Set<string>;

beforeAll(async () => {
  sdl = await currentSdl();
  doc = parse(sdl);
  schema = buildSubgraphSchema({ typeDefs: doc });
  defined = new Set(
    doc.definitions.flatMap((d) =>
      'name' in d && d.name && d.kind !== Kind.DIRECTIVE_DEFINITION ? [d.name.value] : [],
    ),
  );
});

const types = (): GraphQLNamedType[] => [...defined].sort().map((n) => schema.getType(n)!);
const isFederationField = (type: string, field: string): boolean => ROOTS.has(type) && field.startsWith('_');
const keysOf = (name: string): string[] =>
  doc.definitions.flatMap((d) =>
    (d.kind === Kind.OBJECT_TYPE_DEFINITION || d.kind === Kind.OBJECT_TYPE_EXTENSION) && d.name.value === name
      ? (d.directives ?? [])
          .filter((x: ConstDirectiveNode) => x.name.value === 'key')
          .map((x) => print(x.arguments![0]!.value))
      : [],
  );

/** Every element that should have a description and has none, as `Type`, `Type.field`, `Type.field(arg)`, `Enum.VALUE`. */
function undescribed(): string[] {
  const out: string[] = [];
  for (const t of types()) {
    const other = OWNED_BY_OTHERS[t.name];
    if (!ROOTS.has(t.name) && !other && !t.description) out.push(t.name);
    if (isObjectType(t) || isInterfaceType(t)) {
      for (const f of Object.values(t.getFields())) {
        if (isFederationField(t.name, f.name) || (other && f.name === other.key)) continue;
        if (!f.description) out.push(`${t.name}.${f.name}`);
        for (const a of f.args) if (!a.description) out.push(`${t.name}.${f.name}(${a.name})`);
      }
    }
    if (isInputObjectType(t))
      for (const f of Object.values(t.getFields())) if (!f.description) out.push(`${t.name}.${f.name}`);
    if (isEnumType(t)) for (const v of t.getValues()) if (!v.description) out.push(`${t.name}.${v.name}`);
  }
  return out;
}

/** Names that break the convention, each with the rule it breaks. */
function misnamed(): string[] {
  const out: string[] = [];
  const mutations = Object.values(schema.getMutationType()!.getFields());
  const named = new Set(
    mutations.flatMap((m) => [
      `${m.name[0]!.toUpperCase()}${m.name.slice(1)}Input`,
      `${m.name[0]!.toUpperCase()}${m.name.slice(1)}Payload`,
    ]),
  );
  const inputs = mutations.flatMap((m) =>
    m.args.filter((a) => a.name === 'input').map((a) => ({ m: m.name, type: getNamedType(a.type).name })),
  );
  for (const t of types()) {
    const n = t.name;
    if (ROOTS.has(n) || OWNED_BY_OTHERS[n] || SHARED_NAMES[n]) continue;
    if (!/Volume|Storage/.test(n)) out.push(`${n}: contains neither Volume nor Storage`);
    // Backend-specific names start with the backend's word; a mutation's own input or payload takes the mutation's name instead (checked below).
    const word = BACKEND_WORD.exec(n);
    if (word && word.index !== 0 && !named.has(n) && !inputs.some((i) => i.type === n))
      out.push(`${n}: a backend-specific name starts with ${word[0]}`);
  }
  // A mutation's input is named after it, unless several mutations share it.
  for (const { m, type } of inputs) {
    const expected = `${m[0]!.toUpperCase()}${m.slice(1)}Input`;
    if (type !== expected && inputs.filter((i) => i.type === type).length < 2)
      out.push(`${type}: the input of ${m} only, so named ${expected}`);
  }
  return out;
}

/** Fields whose type is another team's entity and that are non-null: a reference the owner resolves to null would null their parent too. */
function nonNullReferencesToOthers(): string[] {
  const out: string[] = [];
  for (const t of types()) {
    if (!isObjectType(t) && !isInterfaceType(t)) continue;
    for (const f of Object.values(t.getFields())) {
      if (OWNED_BY_OTHERS[getNamedType(f.type).name] && isNonNullType(f.type))
        out.push(`${t.name}.${f.name}: ${String(f.type)}`);
    }
  }
  return out;
}

describe('schema v2 contract', () => {
  test('every type, field, argument, enum value and input field we own has a description', () => {
    expect(undescribed()).toEqual([]);
  });

  test("other teams' entities carry no description of ours on the type or its key (theirs wins, with no INCONSISTENT_DESCRIPTION hint)", () => {
    const ours = Object.entries(OWNED_BY_OTHERS).flatMap(([name, { key }]) => {
      const t = schema.getType(name);
      if (!isObjectType(t)) return [`${name}: missing`];
      return [t.description ? `${name}` : [], t.getFields()[key]?.description ? `${name}.${key}` : []].flat();
    });
    expect(ours).toEqual([]);
  });

  test('every type name we own follows the naming convention (docs/schema.md)', () => {
    expect(misnamed()).toEqual([]);
  });

  test('the shared exceptions are exactly the documented ones', () => {
    const exceptions = types()
      .map((t) => t.name)
      .filter((n) => !ROOTS.has(n) && !OWNED_BY_OTHERS[n] && !/Volume|Storage/.test(n));
    expect(exceptions.filter((n) => SHARED_NAMES[n]).sort()).toEqual(Object.keys(SHARED_NAMES).sort());
    expect(schema.getType('PageInfo')!.astNode!.directives!.map((d) => d.name.value)).toContain('shareable');
    expect(Object.keys((schema.getType('PageInfo') as GraphQLObjectType).getFields())).toEqual([
      'hasNextPage',
      'hasPreviousPage',
      'startCursor',
      'endCursor',
    ]);
  });

  test('entities and keys are the documented ones (docs/federation.md)', () => {
    const keyed = types()
      .filter((t) => keysOf(t.name).length > 0)
      .map((t) => `${t.name} @key(fields: ${keysOf(t.name).join(', ')})`);
    expect(keyed.sort()).toEqual(
      [...OUR_ENTITIES, ...Object.keys(OWNED_BY_OTHERS)].sort().map((n) => `${n} @key(fields: "id")`),
    );
    // Of other teams' entities we define only the key and the fields we contribute.
    const server = schema.getType('Server') as GraphQLObjectType;
    const node = schema.getType('NomadNode') as GraphQLObjectType;
    expect(Object.keys(server.getFields())).toEqual(['id', 'volumeAttachments', 'volumeAttachmentList']);
    expect(Object.keys(node.getFields())).toEqual(['id', 'volumeClaims', 'volumeClaimList']);
  });

  test("fields pointing at other teams' entities are nullable (an owner resolves a deleted one to null)", () => {
    expect(nonNullReferencesToOthers()).toEqual([]);
  });

  const compose = () =>
    composeSupergraph([
      { name: 'volumes', url: 'http://volumes.invalid/graphql', typeDefs: sdl },
      { name: 'compute', url: 'http://compute.invalid/graphql', typeDefs: COMPUTE_TYPE_DEFS },
      { name: 'scheduler', url: 'http://scheduler.invalid/graphql', typeDefs: SCHEDULER_TYPE_DEFS },
    ]);

  test('composes with the compute and scheduler subgraphs: no errors, no hints', () => {
    const c = compose();
    expect(c.errors.map((e) => e.message)).toEqual([]);
    expect(c.hints.map((h) => `${h.definition.code}: ${h.message}`)).toEqual([]);
  });

  test('the supergraph keeps the cost directives (router demand control reads them)', () => {
    const supergraph = compose().supergraphSdl!;
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/cost/v0.1"');
    const volume = /\ntype Volume\b[^{]*\{[^}]*\}/.exec(supergraph)![0];
    expect(volume).toMatch(/sizeBytes: SafeInt[^\n]*@cost\(weight: 5\)/);
    expect(volume).toMatch(/attachments: \[VolumeAttachment!\][^\n]*@cost\(weight: 5\) @listSize\(assumedSize: 5\)/);
    expect(supergraph).toMatch(
      /\n {2}volumes\([^]*?\): VolumeConnection![^\n]*@cost\(weight: 5\) @listSize\(slicingArguments: \["first"\], sizedFields: \["edges", "nodes"\]\)/,
    );
  });
});
