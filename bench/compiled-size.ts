/**
 * The heap one compiled document holds, against the estimate compiled execution charges it in its
 * budget (server/execution/compiled.ts, `estimatedBytes`; issue 27, item 2). For each document
 * shape: COPIES documents of that shape, each new text (so V8 shares no code between them), are
 * parsed, compiled by graphql-jit against the gateway's schema (limits' wrapper included) and
 * kept; the heap after a full GC, less the heap before, divided by COPIES is what one holds (its
 * parsed document included). Shapes: a few written out (the attack's list, 15 aliases, a fragment
 * spread on every alias, long literals) and random selections over the schema (seeded).
 *
 *   node --expose-gc --import tsx bench/compiled-size.ts
 *   SIZE_RANDOM=n   random shapes (default 40)     SIZE_SEED=n   their seed (default 1)
 *
 * Prints one Markdown table; nothing is written. No speed is measured.
 */
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isLeafType,
  isNonNullType,
  parse,
  validate,
  type GraphQLCompositeType,
  type GraphQLObjectType,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { estimatedBytes, turnOffV8CompilationCache } from '../server/execution/compiled';
import { operationLimits } from '../server/limits';
import { apolloLimitOptions } from '../server/limits/apollo';
import { buildGatewaySchema } from '../server/schema';

const COPIES = 30;
const GENERATED_SOURCE = '__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation';
const schema = apolloLimitOptions(operationLimits(undefined as never), buildGatewaySchema()).schema;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const VOLUME = 'id backend { id } namespace nativeId name status backendStatus sizeBytes createdAt updatedAt';
const LONG = 'y'.repeat(50_000);
/** Shapes written out: `i` makes each copy new text. */
const SHAPES: Record<string, (i: number) => string> = {
  'one list field': (i) => `{ volumes(first: ${1 + i}) { nodes { id } } }`,
  'the attack (scripts/attacks/unique-documents.ts)': (i) =>
    `query { volumes(first: 20, filter: { backends: ["openstack"], name: "r15-${i}" }) { nodes { ${VOLUME} attachments { id state stateReason backendState device attachedAt } } pageInfo { hasNextPage endCursor } omittedBackends { backend { id } reason code } } }`,
  '15 aliases of a volume with its attachments': (i) =>
    `{ ${Array.from({ length: 15 }, (_, a) => `a${a}: volume(id: "x${i}") { ${VOLUME} attachments { id } }`).join(' ')} }`,
  'one fragment spread on 15 aliases': (i) =>
    `query { ${Array.from({ length: 15 }, (_, a) => `a${a}: volume(id: "x${i}") { ...F }`).join(' ')} } fragment F on Volume { ${VOLUME} attachments { id volume { ${VOLUME} } } }`,
  '15 literals of 50 KB': (i) =>
    `{ ${Array.from({ length: 15 }, (_, a) => `a${a}: volume(id: "${i}${LONG}${a}") { id }`).join(' ')} }`,
  'a 50 KB default value': (i) => `query($x: ID = "${i}${LONG}") { a: volume(id: $x) { id } }`,
  'a default list of 900 values': (i) =>
    `query($x: [ID] = [${Array.from({ length: 900 }, (_, k) => `"${k}"`).join(',')}]) { volume(id: "${i}") { id } }`,
};

let seed = Number(process.env.SIZE_SEED ?? 1);
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** A random selection of `t` to `depth`, at most `width` fields a level; fields with required non-text arguments are skipped. */
function selection(t: GraphQLCompositeType, depth: number, width: number): string {
  const parts: string[] = [];
  if (isAbstractType(t)) {
    parts.push('__typename');
    for (const p of schema.getPossibleTypes(t))
      if (depth > 0 && random() < 0.6) parts.push(`... on ${p.name} { ${selection(p, depth, width)} }`);
    return parts.join(' ');
  }
  const fields = Object.values((t as GraphQLObjectType).getFields());
  for (let k = 1 + Math.floor(random() * width); k > 0; k--) {
    const f = pick(fields);
    const required = f.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
    if (
      required.some((a) => !isLeafType(getNamedType(a.type)) || !['ID', 'String'].includes(getNamedType(a.type).name))
    )
      continue;
    const args = required.length ? `(${required.map((a) => `${a.name}: "x"`).join(', ')})` : '';
    const named = getNamedType(f.type);
    if (!isCompositeType(named)) parts.push(`${f.name}${args}`);
    else if (depth > 0) parts.push(`${f.name}${args} { ${selection(named, depth - 1, width)} }`);
  }
  return parts.length ? parts.join(' ') : '__typename';
}

interface Row {
  shape: string;
  generated: number;
  held: number;
  estimate: number;
}

/** COPIES documents of `make`'s shape compiled and kept; undefined when the shape is not valid or not compiled. */
function measure(shape: string, make: (i: number) => string): Row | undefined {
  const first = parse(make(0));
  if (validate(schema, first).length > 0) return undefined;
  const kept: unknown[] = [];
  let generated = 0;
  const before = heap();
  for (let i = 0; i < COPIES; i++) {
    const q = compileQuery(schema, parse(make(i)), undefined, {
      disablingCapturingStackErrors: true,
      debug: true,
    } as never) as Record<string, unknown>;
    if (!isCompiledQuery(q as never)) return undefined;
    generated = (q[GENERATED_SOURCE] as string).length;
    delete q[GENERATED_SOURCE];
    kept.push(q);
  }
  const held = (heap() - before) / COPIES;
  return { shape, generated, held, estimate: estimatedBytes(generated, first, make(0)) };
}

function main(): void {
  turnOffV8CompilationCache();
  const rows: Row[] = [];
  for (const [shape, make] of Object.entries(SHAPES)) {
    const r = measure(shape, make);
    if (r) rows.push(r);
  }
  const randoms = Number(process.env.SIZE_RANDOM ?? 40);
  for (let n = 0; n < randoms; n++) {
    const body = selection(schema.getQueryType()!, 1 + Math.floor(random() * 5), 1 + Math.floor(random() * 6));
    const r = measure(`random ${n + 1}`, (i) => `{ u${i}: __typename ${body} }`);
    if (r) rows.push(r);
  }
  const kib = (n: number): string => (n / 1024).toFixed(1);
  console.log(
    '| shape | generated source, characters | heap held, KiB | estimate, KiB | estimate ÷ held |\n|---|---|---|---|---|',
  );
  for (const r of rows)
    console.log(
      `| ${r.shape} | ${r.generated} | ${kib(r.held)} | ${kib(r.estimate)} | ${(r.estimate / r.held).toFixed(2)} |`,
    );
  // Below 16 KiB a copy's share is within the GC's noise.
  const ratios = rows.filter((r) => r.held > 16_384).map((r) => r.estimate / r.held);
  console.log(
    `\nestimate ÷ held over ${ratios.length} shapes holding more than 16 KiB: ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
  );
}

main();
