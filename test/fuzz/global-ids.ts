/**
 * Global ids as an attacker forges them. The gateway's ids are opaque base64url of a JSON array
 * `[kind, backend, scope, nativeId(, subId)]` (docs/architecture.md); the fuzzer builds such
 * arrays from real and hostile parts, plus ids that are not of that form at all. A kind the
 * gateway does not know is harmless here: it must be refused like any other bad id.
 */
import fc from 'fast-check';
import { hostileIdentifier, longString, mixedString } from './hostile-strings';
import type { Vocabulary } from './world';

const KINDS = ['Volume', 'Snapshot', 'Attachment', 'Plugin', 'Operation', 'Server', 'Backend', 'volume', ''];

const encode = (parts: unknown): string => Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');

/** A global id: well-formed with hostile parts, or malformed in its encoding or shape. */
export function globalId(v: Vocabulary): fc.Arbitrary<string> {
  const realParts = (): Array<fc.Arbitrary<string>> => [
    fc.constantFrom('Volume', 'Volume', 'Snapshot', 'Attachment', 'Plugin'),
    fc.constantFrom(...v.backends),
    fc.constantFrom(...v.namespaces, ...v.projects, ...v.plugins),
    fc.constantFrom(...v.nativeIds, ...v.plugins),
  ];
  const hostileParts: Array<fc.Arbitrary<string>> = [
    fc.constantFrom(...KINDS),
    hostileIdentifier(v.backends, 300),
    fc.oneof(
      { weight: 3, arbitrary: hostileIdentifier([...v.namespaces, ...v.projects, ...v.plugins], 300) },
      { weight: 1, arbitrary: fc.constant('*') },
    ),
    hostileIdentifier(v.nativeIds, 300),
    hostileIdentifier([...v.nodes, ...v.nativeIds], 300),
  ];
  // Real parts only: ids that name seeded objects reach the backends and their nested fields.
  const plausible = fc.tuple(...realParts()).map(encode);
  // Real parts with exactly one hostile part (or a hostile fifth part): each check is reached on its own.
  const oneHostile = fc
    .tuple(fc.tuple(...realParts()), fc.nat(4))
    .chain(([parts, i]) =>
      hostileParts[i]!.map((bad) => encode(i === 4 ? [...parts, bad] : parts.map((p, j) => (j === i ? bad : p)))),
    );
  const allHostile = fc.tuple(hostileParts[0]!, hostileParts[1]!, hostileParts[2]!, hostileParts[3]!).map(encode);
  const oddShape = fc
    .oneof(
      fc.constant([]),
      fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null), fc.constant({})), {
        maxLength: 7,
      }),
      fc.constant({ kind: 'Volume' }),
      fc.constant('Volume'),
      fc.constant(1e308),
    )
    .map(encode);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...v.volumeIds) },
    { weight: 3, arbitrary: plausible },
    { weight: 6, arbitrary: oneHostile },
    { weight: 1, arbitrary: allHostile },
    { weight: 1, arbitrary: oddShape },
    {
      weight: 1,
      arbitrary: fc
        .tuple(plausible, fc.constantFrom('=', '==', '+', '/', '.', ' ', '\n', '%3D'))
        .map(([id, junk]) => id + junk),
    },
    { weight: 1, arbitrary: mixedString(20) },
    { weight: 1, arbitrary: longString(3_000) },
  );
}
