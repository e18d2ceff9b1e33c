/**
 * What a subscription asks for, read from its document and variables once at subscribe time: the
 * root field, its checked arguments, the key that groups subscribers executing the same
 * document with the same variables (fan-out executes once per group), and whether the document
 * needs backend reads beyond the event's view (then the group is also split by credential).
 */
import { createHash } from 'node:crypto';
import {
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  Kind,
  OperationTypeNode,
  print,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type GraphQLError,
} from 'graphql';
import { BadUserInputError } from '../../adapters/contract/errors';
import { decodeGlobalId } from '../../adapters/contract/ids';
import type { ChangeType } from '../events';
import { readsBeyondView } from './event-fields';
import type { EventFieldSources } from './view';

/** Root fields of the Subscription type. */
export type LiveField = 'volumeChanged' | 'attachmentChanged' | 'operationUpdated' | 'volumeProblemChanged';
export const LIVE_FIELDS: readonly LiveField[] = [
  'volumeChanged',
  'attachmentChanged',
  'operationUpdated',
  'volumeProblemChanged',
];

/** Most `filter.volumeIds` one subscription may name. */
export const MAX_VOLUME_IDS = 100;

/** A checked `volumeChanged` filter; absent members match everything. */
export interface VolumeFilter {
  backends?: ReadonlySet<string>;
  namespace?: string;
  /** Global ids. */
  volumeIds?: ReadonlySet<string>;
  types?: ReadonlySet<ChangeType>;
}

/** A checked `attachmentChanged` target: exactly one key. */
export type AttachmentTarget =
  | { kind: 'volume'; id: string; backend: string }
  | { kind: 'consumer'; id: string }
  | { kind: 'node'; id: string }
  | { kind: 'server'; id: string };

/** A `volumeProblemChanged` filter, checked. */
export interface ProblemChangeFilter {
  backends?: ReadonlySet<string>;
  kinds?: ReadonlySet<string>;
  severities?: ReadonlySet<string>;
  volumeIds?: ReadonlySet<string>;
}

export type Interest =
  | { field: 'volumeChanged'; filter: VolumeFilter }
  | { field: 'attachmentChanged'; target: AttachmentTarget }
  | { field: 'volumeProblemChanged'; filter: ProblemChangeFilter };

/** One subscription's request. */
export interface LiveSpec {
  field: LiveField;
  /** The response key (alias or field name) the document gives the root field. */
  responseKey: string;
  args: Record<string, unknown>;
  /** Coerced variables, for executing the document per event. */
  variables: Record<string, unknown>;
  /** Same document, operation name and variables → same key. */
  groupKey: string;
  /** Whether the document selects a field that needs a backend read beyond the event's view (event-fields.ts). */
  reads: boolean;
}

/** Bad requests (variables that do not coerce, no subscription operation) as GraphQL errors. */
export class SpecErrors extends Error {
  constructor(readonly errors: readonly GraphQLError[]) {
    super(errors.map((e) => e.message).join('; '));
  }
}

/** Stable JSON (sorted keys), so equal variables give equal group keys whatever their order. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Printed documents: the transport hands every subscriber of the same text the same document. */
const prints = new WeakMap<DocumentNode, string>();

function printed(d: DocumentNode): string {
  let p = prints.get(d);
  if (p === undefined) prints.set(d, (p = print(d)));
  return p;
}

/**
 * Reads the subscription's root field and arguments, and whether its document needs backend reads
 * as `sources` classifies the fields.
 * @throws SpecErrors for variables that do not coerce
 * @throws BadUserInputError when the document holds no subscription of a known field
 */
export function readSpec(a: ExecutionArgs, sources: EventFieldSources): LiveSpec {
  const op = getOperationAST(a.document, a.operationName ?? undefined);
  if (!op || op.operation !== OperationTypeNode.SUBSCRIPTION)
    throw new BadUserInputError('the document holds no subscription operation of that name', 'query');
  const fields = op.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD);
  const node = fields[0];
  const root = a.schema.getSubscriptionType();
  if (!node || fields.length !== op.selectionSet.selections.length || fields.length !== 1 || !root)
    throw new BadUserInputError('a subscription selects exactly one root field', 'query');
  const field = node.name.value as LiveField;
  const def = root.getFields()[field];
  if (!def || !LIVE_FIELDS.includes(field))
    throw new BadUserInputError(`unknown subscription field "${node.name.value}"`, 'query');
  const coerced = getVariableValues(a.schema, op.variableDefinitions ?? [], a.variableValues ?? {});
  if (coerced.errors) throw new SpecErrors(coerced.errors);
  const args = getArgumentValues(def, node, coerced.coerced);
  const groupKey = createHash('sha256')
    .update(printed(a.document))
    .update('\0')
    .update(a.operationName ?? '')
    .update('\0')
    .update(stable(coerced.coerced))
    .digest('base64url');
  return {
    field,
    responseKey: node.alias?.value ?? field,
    args,
    variables: coerced.coerced,
    groupKey,
    reads: readsBeyondView(a.schema, sources, a.document),
  };
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);

/**
 * The checked interest of a volumeChanged/attachmentChanged subscription.
 * @throws BadUserInputError for more than 100 volume ids, malformed ids, or not exactly one target
 */
/** The checked backends and volume ids of a filter argument (volume ids at most {@link MAX_VOLUME_IDS}). */
function backendsAndVolumes(
  f: Record<string, unknown>,
  knownBackend: (id: string, argument: string) => void,
): { backends?: Set<string>; volumeIds?: Set<string> } {
  const out: { backends?: Set<string>; volumeIds?: Set<string> } = {};
  const backends = strings(f.backends);
  if (backends) {
    backends.forEach((b, i) => knownBackend(b, `filter.backends[${i}]`));
    out.backends = new Set(backends);
  }
  const ids = strings(f.volumeIds);
  if (ids) {
    if (ids.length > MAX_VOLUME_IDS)
      throw new BadUserInputError(`filter.volumeIds takes at most ${MAX_VOLUME_IDS} ids`, 'filter.volumeIds');
    ids.forEach((id, i) =>
      knownBackend(decodeGlobalId(id, 'Volume', `filter.volumeIds[${i}]`).backend, `filter.volumeIds[${i}]`),
    );
    out.volumeIds = new Set(ids);
  }
  return out;
}

export function readInterest(spec: LiveSpec, knownBackend: (id: string, argument: string) => void): Interest {
  if (spec.field === 'volumeProblemChanged') {
    const f = (spec.args.filter ?? {}) as Record<string, unknown>;
    const kinds = strings(f.kinds);
    const severities = strings(f.severities);
    return {
      field: 'volumeProblemChanged',
      filter: {
        ...backendsAndVolumes(f, knownBackend),
        ...(kinds ? { kinds: new Set(kinds) } : {}),
        ...(severities ? { severities: new Set(severities) } : {}),
      },
    };
  }
  if (spec.field === 'volumeChanged') {
    const f = (spec.args.filter ?? {}) as Record<string, unknown>;
    const filter: { -readonly [K in keyof VolumeFilter]: VolumeFilter[K] } = backendsAndVolumes(f, knownBackend);
    if (typeof f.namespace === 'string') filter.namespace = f.namespace;
    const types = strings(f.types);
    if (types) filter.types = new Set(types as ChangeType[]);
    return { field: 'volumeChanged', filter };
  }
  const t = (spec.args.target ?? {}) as Record<string, unknown>;
  const given = (['volume', 'consumer', 'node', 'server'] as const).filter((k) => t[k] !== null && t[k] !== undefined);
  if (given.length !== 1)
    throw new BadUserInputError(
      'give exactly one of target.volume, target.consumer, target.node, target.server',
      'target',
    );
  const kind = given[0]!;
  const id = String(t[kind]);
  if (id.length === 0 || id.length > 255)
    throw new BadUserInputError(`target.${kind} must be 1-255 characters`, `target.${kind}`);
  if (kind === 'volume') {
    const backend = decodeGlobalId(id, 'Volume', 'target.volume').backend;
    knownBackend(backend, 'target.volume');
    return { field: 'attachmentChanged', target: { kind, id, backend } };
  }
  return { field: 'attachmentChanged', target: { kind, id } };
}
