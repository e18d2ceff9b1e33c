/**
 * GraphQL arguments → adapter inputs, with the shared input rules applied before any backend
 * call. Resolvers call these; adapters receive only checked values.
 */
import type { VolumeSpec } from '../adapters/backend';
import { BadUserInputError } from '../adapters/errors';
import { byteCount, safeIdentifier, safeText } from '../adapters/input';
import type { KeyValue, Topology } from '../adapters/model';
import type { CreateVolumeInput, InputMaybe, KeyValueInput, RegisterVolumeInput, TopologyInput } from '../schema/generated/resolvers-types';

const MAX_LIST = 100;

export const optionalId = (v: InputMaybe<string> | undefined, argument: string): string | undefined =>
  v === null || v === undefined ? undefined : safeIdentifier(v, argument);

/** A namespace argument; `*` (all namespaces) only where `allowAll`. */
export function namespaceArg(v: InputMaybe<string> | undefined, argument: string, fallback: string, allowAll = false): string {
  if (v === null || v === undefined) return fallback;
  if (v === '*') {
    if (allowAll) return v;
    throw new BadUserInputError(`${argument}: "*" is only allowed when listing`, argument);
  }
  return safeIdentifier(v, argument);
}

function bounded<T>(list: readonly T[], argument: string): readonly T[] {
  if (list.length > MAX_LIST) throw new BadUserInputError(`${argument} has more than ${MAX_LIST} entries`, argument);
  return list;
}

export function keyValues(list: InputMaybe<readonly KeyValueInput[]> | undefined, argument: string): KeyValue[] {
  return bounded(list ?? [], argument).map((kv, i) => ({
    key: safeText(kv.key, `${argument}[${i}].key`, 256),
    value: safeText(kv.value, `${argument}[${i}].value`),
  }));
}

function topologies(list: InputMaybe<readonly TopologyInput[]> | undefined, argument: string): Topology[] | undefined {
  if (!list) return undefined;
  return bounded(list, argument).map((t, i) => ({ segments: keyValues(t.segments, `${argument}[${i}].segments`) }));
}

const bytes = (v: InputMaybe<number> | undefined, argument: string): number | undefined =>
  v === null || v === undefined ? undefined : byteCount(v, argument);

function common(input: CreateVolumeInput | RegisterVolumeInput): VolumeSpec {
  const min = bytes(input.capacityMinBytes, 'input.capacityMinBytes');
  const max = bytes(input.capacityMaxBytes, 'input.capacityMaxBytes');
  if (min !== undefined && max !== undefined && max > 0 && min > max) {
    throw new BadUserInputError('input.capacityMinBytes must not exceed input.capacityMaxBytes', 'input.capacityMinBytes');
  }
  return {
    namespace: namespaceArg(input.namespace, 'input.namespace', 'default'),
    nativeId: optionalId(input.nativeId, 'input.nativeId'),
    name: safeText(input.name, 'input.name', 256),
    pluginId: optionalId(input.plugin, 'input.plugin'),
    capacityMinBytes: min,
    capacityMaxBytes: max,
    capabilities: [...bounded(input.capabilities ?? [], 'input.capabilities')],
    mountOptions: input.mountOptions
      ? {
          fsType: input.mountOptions.fsType ? safeText(input.mountOptions.fsType, 'input.mountOptions.fsType', 64) : undefined,
          mountFlags: bounded(input.mountOptions.mountFlags ?? [], 'input.mountOptions.mountFlags').map((f, i) => safeText(f, `input.mountOptions.mountFlags[${i}]`, 256)),
        }
      : undefined,
    secrets: keyValues(input.secrets, 'input.secrets'),
    parameters: keyValues(input.parameters, 'input.parameters'),
    requiredTopologies: topologies(input.requiredTopologies, 'input.requiredTopologies'),
    preferredTopologies: topologies(input.preferredTopologies, 'input.preferredTopologies'),
  };
}

export function createVolumeSpec(input: CreateVolumeInput): VolumeSpec {
  return {
    ...common(input),
    snapshotId: optionalId(input.snapshotId, 'input.snapshotId'),
    cloneId: optionalId(input.cloneId, 'input.cloneId'),
    sizeGiB: input.sizeGiB === null || input.sizeGiB === undefined ? undefined : positiveInt(input.sizeGiB, 'input.sizeGiB'),
    description: optionalText(input.description, 'input.description'),
    volumeType: optionalText(input.volumeType, 'input.volumeType', 255),
    availabilityZone: optionalText(input.availabilityZone, 'input.availabilityZone', 255),
    metadata: input.metadata ? keyValues(input.metadata, 'input.metadata') : undefined,
  };
}

export const optionalText = (v: InputMaybe<string> | undefined, argument: string, max?: number): string | undefined =>
  v === null || v === undefined ? undefined : safeText(v, argument, max);

/** A whole number ≥ 1 (sizes in GiB). */
export function positiveInt(v: number, argument: string): number {
  if (!Number.isSafeInteger(v) || v < 1) throw new BadUserInputError(`${argument} must be a whole number of 1 or more (got ${v})`, argument);
  return v;
}

export function registerVolumeSpec(input: RegisterVolumeInput): VolumeSpec {
  return {
    ...common(input),
    externalId: safeIdentifier(input.externalId, 'input.externalId'),
    context: keyValues(input.context, 'input.context'),
  };
}
