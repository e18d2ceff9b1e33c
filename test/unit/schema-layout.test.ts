/**
 * server/schema-layout.ts: where a type's part is written (the core's definition or a backend's
 * `extend` in schema/<backend>/) does not change the printed subgraph SDL; what is new still shows.
 */
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { layOutAsPublished } from '../../server/schema-layout';
import { foldEnumExtensions, gatewayDocument } from '../../server/schema';
import { loadPublishedSdl } from '../../schema';
import { currentSdl, publishedText } from '../../scripts/schema-check';

const print = (sdl: string): string => printSubgraphSchema(buildSubgraphSchema({ typeDefs: parse(sdl) }));
const printDoc = (doc: ReturnType<typeof parse>): string => printSubgraphSchema(buildSubgraphSchema({ typeDefs: doc }));

/** As published: every part in the core's definitions. */
const PUBLISHED = `
"Kinds." enum Kind { "First." A "Second." B }
"Details." union Details = ADetails | BDetails
"A's." type ADetails { a: Int }
"B's." type BDetails { b: Int }
"Create." input CreateInput { name: String! "A's part." a: Int "B's part." b: Int "Retry key." key: String }
type Query { "One." one: Details "Kinds." kinds: [Kind!]! }
`;

/** The same schema with each backend's parts moved into extensions after the core. */
const SPLIT = `
"Kinds." enum Kind
"Details." union Details
"Create." input CreateInput { name: String! "Retry key." key: String }
type Query { "One." one: Details }
extend enum Kind { "Second." B }
"B's." type BDetails { b: Int }
extend union Details = BDetails
extend input CreateInput { "B's part." b: Int }
extend enum Kind { "First." A }
"A's." type ADetails { a: Int }
extend union Details = ADetails
extend input CreateInput { "A's part." a: Int }
extend type Query { "Kinds." kinds: [Kind!]! }
`;

describe('the published layout', () => {
  it('should print a schema whose parts moved into extensions as it was published (order, blocks, descriptions)', () => {
    const published = print(PUBLISHED);
    const laidOut = printDoc(layOutAsPublished(foldEnums(SPLIT), parse(published)));
    expect(laidOut).toBe(published);
  });

  it('should still show what the published SDL lacks: a new part after the published ones, a new type after the published types', () => {
    const published = print(PUBLISHED);
    const grown = `${SPLIT}\n"C's." type CDetails { c: Int }\nextend union Details = CDetails\nextend input CreateInput { "C's part." c: Int }`;
    const laidOut = printDoc(layOutAsPublished(foldEnums(grown), parse(published)));
    expect(laidOut).toContain('union Details = ADetails | BDetails\n\nextend union Details = CDetails');
    expect(laidOut).toMatch(
      /"""B's part\."""\n {2}b: Int\n\n {2}"""Retry key\."""\n {2}key: String\n}\n\nextend input CreateInput \{\n {2}"""C's part\."""\n {2}c: Int\n}/,
    );
    expect(laidOut.indexOf('type CDetails')).toBeGreaterThan(laidOut.indexOf('input CreateInput'));
  });

  it('should take content from the document only: a part the document dropped is gone, a changed description shows', () => {
    const published = print(PUBLISHED);
    const changed = SPLIT.replace(
      'extend input CreateInput { "B\'s part." b: Int }',
      'extend type Query { "Two." two: Int }',
    ).replace('"Retry key."', '"Retry token."');
    const laidOut = printDoc(layOutAsPublished(foldEnums(changed), parse(published)));
    const createInput = /input CreateInput \{[^}]*\}/.exec(laidOut)?.[0] ?? '';
    expect(createInput).toContain('a: Int');
    expect(createInput).not.toContain('b: Int');
    expect(laidOut).toContain('"""Retry token."""');
    expect(laidOut).toContain('two: Int');
  });

  it("should build the gateway schema that is published, byte for byte, with the backends' parts in schema/<backend>/", async () => {
    expect(loadPublishedSdl()).toBe(publishedText(await currentSdl()));
    expect(printSubgraphSchema(buildSubgraphSchema({ typeDefs: gatewayDocument() }))).toBe(await currentSdl());
  });
});

/** The gateway's own enum fold (server/schema.ts), which the layout runs after. */
const foldEnums = (sdl: string): ReturnType<typeof parse> => foldEnumExtensions(parse(sdl));
