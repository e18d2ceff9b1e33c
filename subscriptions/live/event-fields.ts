/**
 * Which fields of a subscription's selection an event can serve from the watcher's view, and which
 * need a backend read the view lacks. A document is classified once (cached by its parsed
 * document, which the transports share between subscribers of the same text): only documents
 * that select a reading field are executed per credential (fanout.ts); the others keep the fast
 * path, one execution per group.
 */
import {
  BREAK,
  getNamedType,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import type { EventFieldSources } from './view';

const classified = new WeakMap<EventFieldSources, WeakMap<DocumentNode, boolean>>();

/**
 * Whether any field `document` selects needs a backend read beyond the event's view, as
 * `sources` classifies the fields (the resolvers' classification, resolvers/event-fields.ts;
 * an unlisted field reads its parent object). Every
 * operation and fragment of the document counts (a validated document uses all its fragments), and
 * `@skip`/`@include` are not read: a document is at worst executed per credential when it need not be.
 */
export function readsBeyondView(schema: GraphQLSchema, sources: EventFieldSources, document: DocumentNode): boolean {
  let byDocument = classified.get(sources);
  if (!byDocument) classified.set(sources, (byDocument = new WeakMap()));
  let reads = byDocument.get(document);
  if (reads === undefined) byDocument.set(document, (reads = selectsReads(schema, sources, document)));
  return reads;
}

function selectsReads(schema: GraphQLSchema, sources: EventFieldSources, document: DocumentNode): boolean {
  const info = new TypeInfo(schema);
  let reads = false;
  visit(
    document,
    visitWithTypeInfo(info, {
      Field(node) {
        const parent = info.getParentType();
        if (!parent || sources[`${getNamedType(parent).name}.${node.name.value}`] !== 'read') return;
        reads = true;
        return BREAK;
      },
    }),
  );
  return reads;
}
