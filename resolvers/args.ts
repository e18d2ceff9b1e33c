/**
 * GraphQL arguments → adapter inputs, with the shared input rules applied before any backend
 * call. Resolvers call these; adapters receive only checked values.
 */
import type { VolumeBackend, VolumeSpec } from '../adapters/backend';
import { BadUserInputError } from '../adapters/errors';
import { backendIdentifier, checkGlobalIdParts, decodeGlobalId, type GlobalIdKind, type GlobalIdParts } from '../adapters/ids';
import { byteCount, headerText, safeIdentifier, safeText, type IdPosition } from '../adapters/input';
import type { BackendKind, KeyValue, Topology } from '../adapters/model';
import type { CreateVolumeInput, InputMaybe, KeyValueInput, RegisterVolumeInput, TopologyInput } from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../server/context';

const MAX_LIST = 100;

export const optionalId = (v: InputMaybe<string> | undefined, argument: string): string | undefined =>
  v === null || v === undefined ? undefined : safeIdentifier(v, argument);

/** An identifier argument for one backend: the shared rules, then that backend kind's rule for `position`. */
export const idArg = (b: Pick<VolumeBackend, 'kind'>, position: IdPosition, v: string, argument: string): string => backendIdentifier(b.kind, position, v, argument);

export const optionalIdArg = (b: Pick<VolumeBackend, 'kind'>, position: IdPosition, v: InputMaybe<string> | undefined, argument: string): string | undefined =>
  v === null || v === undefined ? undefined : idArg(b, position, v, argument);

/**
 * An identifier filter over several backends: refused when no selected backend could have such
 * an identifier (the first backend's reason is given); the shared rules always apply.
 */
export function filterIdArg(backends: readonly Pick<VolumeBackend, 'kind'>[], position: IdPosition, v: InputMaybe<string> | undefined, argument: string): string | undefined {
  if (v === null || v === undefined) return undefined;
  safeIdentifier(v, argument);
  const kinds = [...new Set(backends.map((b) => b.kind))];
  const errors = kinds.map((k) => accepts(k, position, v, argument)).filter((e): e is BadUserInputError => e !== null);
  if (kinds.length > 0 && errors.length === kinds.length) throw errors[0];
  return v;
}

function accepts(kind: BackendKind, position: IdPosition, v: string, argument: string): BadUserInputError | null {
  try {
    backendIdentifier(kind, position, v, argument);
    return null;
  } catch (err) {
    if (err instanceof BadUserInputError) return err;
    throw err;
  }
}

/**
 * A global id argument: decoded, its backend configured, and every part checked with that
 * backend kind's rules, as strictly as the same values given as arguments.
 */
export function globalIdArg(ctx: GatewayContext, id: string, expected: GlobalIdKind | null, argument = 'id'): GlobalIdParts {
  const p = decodeGlobalId(id, expected, argument);
  return checkGlobalIdParts(p, ctx.registry.forId(p.backend).kind, argument);
}

/**
 * A namespace argument; `*` (all namespaces) only where `allowAll`. With `backend`, that kind's
 * namespace rule applies too (a Nomad namespace, an OpenStack project id).
 */
export function namespaceArg(v: InputMaybe<string> | undefined, argument: string, fallback: string, allowAll = false, backend?: Pick<VolumeBackend, 'kind'>): string {
  if (v === null || v === undefined) return fallback;
  if (v === '*') {
    if (allowAll) return v;
    throw new BadUserInputError(`${argument}: "*" is only allowed when listing`, argument);
  }
  return backend ? idArg(backend, 'namespace', v, argument) : safeIdentifier(v, argument);
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

/**
 * CSI secrets: Nomad takes them in the `X-Nomad-CSI-Secrets` header (backends.md 1.4.6), so keys
 * and values must be printable Latin-1; the header's own `k=v,k=v` rules are Nomad's
 * (`adapters/nomad/requests.ts`). Messages never echo a secret.
 */
export function secretList(list: InputMaybe<readonly KeyValueInput[]> | undefined, argument: string): KeyValue[] {
  return bounded(list ?? [], argument).map((kv, i) => ({
    key: headerText(kv.key, `${argument}[${i}].key`, 256),
    value: headerText(kv.value, `${argument}[${i}].value`),
  }));
}

function topologies(list: InputMaybe<readonly TopologyInput[]> | undefined, argument: string): Topology[] | undefined {
  if (!list) return undefined;
  return bounded(list, argument).map((t, i) => ({ segments: keyValues(t.segments, `${argument}[${i}].segments`) }));
}

const bytes = (v: InputMaybe<number> | undefined, argument: string): number | undefined =>
  v === null || v === undefined ? undefined : byteCount(v, argument);

function common(input: CreateVolumeInput | RegisterVolumeInput, b: Pick<VolumeBackend, 'kind'>): VolumeSpec {
  const min = bytes(input.capacityMinBytes, 'input.capacityMinBytes');
  const max = bytes(input.capacityMaxBytes, 'input.capacityMaxBytes');
  if (min !== undefined && max !== undefined && max > 0 && min > max) {
    throw new BadUserInputError('input.capacityMinBytes must not exceed input.capacityMaxBytes', 'input.capacityMinBytes');
  }
  return {
    namespace: namespaceArg(input.namespace, 'input.namespace', 'default', false, b),
    nativeId: optionalIdArg(b, 'volume', input.nativeId, 'input.nativeId'),
    name: safeText(input.name, 'input.name', 256),
    pluginId: optionalIdArg(b, 'plugin', input.plugin, 'input.plugin'),
    capacityMinBytes: min,
    capacityMaxBytes: max,
    capabilities: [...bounded(input.capabilities ?? [], 'input.capabilities')],
    mountOptions: input.mountOptions
      ? {
          fsType: input.mountOptions.fsType ? safeText(input.mountOptions.fsType, 'input.mountOptions.fsType', 64) : undefined,
          mountFlags: bounded(input.mountOptions.mountFlags ?? [], 'input.mountOptions.mountFlags').map((f, i) => safeText(f, `input.mountOptions.mountFlags[${i}]`, 256)),
        }
      : undefined,
    secrets: secretList(input.secrets, 'input.secrets'),
    parameters: keyValues(input.parameters, 'input.parameters'),
    requiredTopologies: topologies(input.requiredTopologies, 'input.requiredTopologies'),
    preferredTopologies: topologies(input.preferredTopologies, 'input.preferredTopologies'),
  };
}

export function createVolumeSpec(input: CreateVolumeInput, b: Pick<VolumeBackend, 'kind'>): VolumeSpec {
  return {
    ...common(input, b),
    snapshotId: optionalIdArg(b, 'snapshot', input.snapshotId, 'input.snapshotId'),
    cloneId: optionalIdArg(b, 'volume', input.cloneId, 'input.cloneId'),
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

export function registerVolumeSpec(input: RegisterVolumeInput, b: Pick<VolumeBackend, 'kind'>): VolumeSpec {
  return {
    ...common(input, b),
    externalId: safeIdentifier(input.externalId, 'input.externalId'),
    context: keyValues(input.context, 'input.context'),
  };
}
