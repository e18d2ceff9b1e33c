/**
 * Input rules for the parts of an input (a kind's own part, lists of key-value pairs, topologies),
 * shared by the resolvers and by the backends' own input parsers. Each takes the place the value
 * came from: an argument path in the resolvers, a field relative to the adapter's input in a
 * backend (errors.ts `InputPlace`).
 */
import { BadUserInputError, within, type InputPlace } from './errors';
import { headerText, safeText } from './input';
import type { KeyValue, Topology } from './model';

/** Most entries a list argument may have. */
export const MAX_LIST = 100;

/** A key-value pair as a caller gives it (`StorageKeyValueInput`). */
export interface KeyValueInput {
  readonly key: string;
  readonly value: string;
}

/** A topology as a caller gives it (`StorageTopologyInput`). */
export interface TopologyInput {
  readonly segments: readonly KeyValueInput[];
}

/** `list`, refused when it has more than {@link MAX_LIST} entries. */
export function bounded<T>(list: readonly T[], argument: InputPlace): readonly T[] {
  if (list.length > MAX_LIST) throw BadUserInputError.at(argument, (a) => `${a} has more than ${MAX_LIST} entries`);
  return list;
}

/** Key-value pairs of free text (keys up to 256 characters); absent is none. */
export function keyValueList(list: readonly KeyValueInput[] | null | undefined, argument: InputPlace): KeyValue[] {
  return bounded(list ?? [], argument).map((kv, i) => ({
    key: safeText(kv.key, within(argument, `[${i}].key`), 256),
    value: safeText(kv.value, within(argument, `[${i}].value`)),
  }));
}

/** Key-value pairs that travel in an HTTP header (printable Latin-1, keys up to 256); messages never echo a value. */
export function headerKeyValueList(
  list: readonly KeyValueInput[] | null | undefined,
  argument: InputPlace,
): KeyValue[] {
  return bounded(list ?? [], argument).map((kv, i) => ({
    key: headerText(kv.key, within(argument, `[${i}].key`), 256),
    value: headerText(kv.value, within(argument, `[${i}].value`)),
  }));
}

/** Topologies, each a list of segments; absent stays undefined. */
export function topologyList(
  list: readonly TopologyInput[] | null | undefined,
  argument: InputPlace,
): Topology[] | undefined {
  if (!list) return undefined;
  return bounded(list, argument).map((t, i) => ({
    segments: keyValueList(t.segments, within(argument, `[${i}].segments`)),
  }));
}

/**
 * A kind's own part of an input as its typed shape, or undefined when absent. GraphQL has checked
 * the shape against the schema already; this only refuses what is not an input object at all
 * (a direct caller of the contract passing something else).
 */
export function ownPart<T extends object>(own: unknown, place: InputPlace): T | undefined {
  if (own === null || own === undefined) return undefined;
  if (typeof own !== 'object' || Array.isArray(own))
    throw BadUserInputError.at(place, (a) => `${a || 'the input'} must be an input object`);
  return own as T;
}
