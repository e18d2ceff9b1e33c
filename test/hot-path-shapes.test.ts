/**
 * Object shapes that V8 on Node 20 keeps through young-generation GCs (docs/architecture.md,
 * "Allocation on the hot path"). Measured on the list of 100: such objects made every request's
 * results survive each scavenge and be promoted, about 1 ms of GC per list. The rules, checked on
 * the source:
 * - no accessor in an object literal anywhere in the gateway's code (a class's accessors are on
 *   its prototype, and cost nothing of the kind);
 * - no field added after a spread in the code that runs per item: the wire→model mapping
 *   (`adapters/<kind>/**\/results.ts`, the memory backend's store), the listing, the execution context and loaders, the ids,
 *   and the resolvers. Overriding a field the spread has is fine.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldsAfterSpread, literalAccessors, type ShapeFinding } from './support/object-shapes';
import { files, root } from './support/source-imports';

/** Literal accessors that run once per process, not per request: file → why. */
const ONCE_PER_PROCESS: Readonly<Record<string, string>> = {
  'server/demo-activity.ts': 'the demo activity counters the start-up banner reads',
};

const GATEWAY_DIRS = ['adapters', 'domain', 'resolvers', 'subscriptions', 'server'];
const PER_ITEM = [
  ...files('adapters').filter((f) => /^adapters\/[^/]+\/(.+\/)?results\.ts$/.test(f)),
  // The memory backend maps its data once per change and hands out the same objects.
  'adapters/memory/data/store.ts',
  'adapters/listing.ts',
  'domain/context.ts',
  'domain/loaders.ts',
  'domain/ids.ts',
  ...files('resolvers'),
];

const where = (f: ShapeFinding): string => `${f.file}:${f.line} ${f.names.join(', ')}`;

describe('object literals without accessors', () => {
  const found = GATEWAY_DIRS.flatMap((d) => files(d)).flatMap((f) =>
    literalAccessors(f, readFileSync(join(root, f), 'utf8')),
  );

  it('should put no accessor in an object literal outside the once-per-process list', () => {
    expect(found.filter((f) => !(f.file in ONCE_PER_PROCESS)).map(where)).toEqual([]);
  });

  it('should list only files that still have one (a closed gap leaves the list)', () => {
    expect(Object.keys(ONCE_PER_PROCESS).filter((file) => !found.some((f) => f.file === file))).toEqual([]);
  });

  it('should find an accessor in a literal (the rule can fail)', () => {
    expect(
      literalAccessors('x.ts', 'const o = { a: 1, get b() { return 2; }, set c(v: number) {} };').map(
        (f) => f.names[0],
      ),
    ).toEqual(['b', 'c']);
    expect(literalAccessors('x.ts', 'class C { get b() { return 2; } }')).toEqual([]);
  });
});

describe('no field added after a spread in per-item code', () => {
  let found: ShapeFinding[];
  beforeAll(() => {
    found = fieldsAfterSpread(PER_ITEM);
  }, 120_000);

  it('should check the mapping modules of every backend', () => {
    for (const kind of ['nomad', 'openstack', 'memory'])
      expect(PER_ITEM.filter((f) => f.startsWith(`adapters/${kind}/`)).length).toBeGreaterThan(0);
  });

  it('should add no field after a spread', () => {
    expect(found.map(where)).toEqual([]);
  });

  it('should tell an added field from an overridden one (the rule can fail)', () => {
    const probe = fieldsAfterSpread(['test/support/object-shapes-probe.ts']);
    expect(probe.map((f) => f.names)).toEqual([['extra'], ['[computed]']]);
  }, 120_000);
});
