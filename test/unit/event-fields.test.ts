/**
 * The classification of event fields (resolvers/event-fields.ts and each kind's): every field
 * reachable from a subscription that has a resolver of its own is classified as served from the
 * view or needing a backend read, so a new one cannot slip in unclassified; and a document is
 * classified (subscriptions/live/event-fields.ts) by what its operation and fragments select, once.
 */
import { getNamedType, isInterfaceType, isObjectType, isUnionType, parse, type GraphQLNamedType } from 'graphql';
import { gatewayResolvers } from '../../resolvers';
import { coreEventFields, gatewayEventFields } from '../../resolvers/event-fields';
import { BACKEND_EVENT_FIELDS, BACKEND_RESOLVERS } from '../../server/kinds';
import { buildGatewaySchema } from '../../server/schema';
import { readsBeyondView } from '../../subscriptions/live/event-fields';

const schema = buildGatewaySchema();
const EVENT_FIELDS = gatewayEventFields(BACKEND_EVENT_FIELDS);

/** `Type.field` of every field reachable from the Subscription type whose resolver is its own. */
function resolvedFields(): string[] {
  const own = gatewayResolvers(BACKEND_RESOLVERS) as Record<string, Record<string, unknown> | undefined>;
  const seen = new Set<string>();
  const out: string[] = [];
  const visit = (t: GraphQLNamedType): void => {
    if (seen.has(t.name)) return;
    seen.add(t.name);
    if (isUnionType(t)) t.getTypes().forEach(visit);
    if (isInterfaceType(t)) schema.getPossibleTypes(t).forEach(visit);
    if (!isObjectType(t)) return;
    for (const f of Object.values(t.getFields())) {
      if (own[t.name]?.[f.name] !== undefined) out.push(`${t.name}.${f.name}`);
      visit(getNamedType(f.type));
    }
  };
  for (const f of Object.values(schema.getSubscriptionType()!.getFields())) visit(getNamedType(f.type));
  return out.sort();
}

describe('event field sources', () => {
  it('should classify every field with a resolver of its own that a subscription can select, and nothing else', () => {
    const listed = Object.keys(EVENT_FIELDS).sort();
    const resolved = resolvedFields();
    expect(resolved.filter((f) => !listed.includes(f))).toEqual([]);
    expect(listed.filter((f) => !resolved.includes(f))).toEqual([]);
  });

  it('should refuse a field classified twice (a kind may not reclassify the core or another kind)', () => {
    expect(() => gatewayEventFields([{ 'Volume.id': 'read' }])).toThrow('event field Volume.id is classified twice');
    expect(() => gatewayEventFields([{ 'X.y': 'view' }, { 'X.y': 'read' }])).toThrow('classified twice');
    expect(Object.keys(coreEventFields).every((f) => EVENT_FIELDS[f] === coreEventFields[f])).toBe(true);
  });

  it("should name the reads the issue lists: a plugin, a Nova server's name and status, health, an operation's target", () => {
    for (const f of [
      'NomadVolumeDetails.plugin',
      'VolumeServerConsumer.name',
      'VolumeServerConsumer.status',
      'StorageBackend.health',
      'VolumeOperation.target',
    ])
      expect([f, EVENT_FIELDS[f]]).toEqual([f, 'read']);
  });
});

describe('readsBeyondView', () => {
  const reads = (q: string): boolean => readsBeyondView(schema, EVENT_FIELDS, parse(q));

  it("should keep a document that selects only the view's fields on the view", () => {
    expect(reads('subscription { volumeChanged { type volume { id name sizeBytes attachments { state } } } }')).toBe(
      false,
    );
    expect(
      reads(
        'subscription { volumeChanged { volume { details { ... on NomadVolumeDetails { pluginId context { key } } } } } }',
      ),
    ).toBe(false);
    expect(reads('subscription($id: ID!) { operationUpdated(id: $id) { id state targetId } }')).toBe(false);
  });

  it('should find a read in an inline fragment, a named fragment and under a view field', () => {
    expect(
      reads('subscription { volumeChanged { volume { details { ... on NomadVolumeDetails { plugin { id } } } } } }'),
    ).toBe(true);
    expect(
      reads(`fragment Row on Volume { attachments { consumer { ... on VolumeServerConsumer { name } } } }
        subscription { attachmentChanged(target: { node: "n" }) { volume { ...Row } } }`),
    ).toBe(true);
    expect(reads('subscription { volumeChanged { omittedBackends { backend { health { status } } } } }')).toBe(true);
    expect(reads('subscription($id: ID!) { operationUpdated(id: $id) { target { __typename } } }')).toBe(true);
  });

  it('should classify a document once, by the document object the transports share', () => {
    const doc = parse('subscription { volumeChanged { volume { backend { health { status } } } } }');
    expect(readsBeyondView(schema, EVENT_FIELDS, doc)).toBe(true);
    // The answer is kept with the document: a changed copy of its AST is not looked at again.
    (doc.definitions as unknown[]).length = 0;
    expect(readsBeyondView(schema, EVENT_FIELDS, doc)).toBe(true);
    expect(readsBeyondView(schema, EVENT_FIELDS, parse('subscription { volumeChanged { type } }'))).toBe(false);
  });
});
