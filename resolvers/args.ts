/**
 * GraphQL arguments → adapter inputs, with the shared input rules applied before any backend
 * call. Resolvers call these; adapters receive only checked values.
 */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { HostConnector, VolumeSpec } from '../adapters/contract/call-inputs';
import { BadUserInputError } from '../adapters/contract/errors';
import {
  backendIdentifier,
  checkGlobalIdParts,
  decodeGlobalId,
  type GlobalIdKind,
  type GlobalIdParts,
} from '../adapters/contract/ids';
import { byteCount, safeIdentifier, safeText, type IdPosition } from '../adapters/contract/input';
import { bounded, keyValueList } from '../adapters/contract/input-parts';
import type { BackendKind, KeyValue } from '../adapters/contract/model';
import type {
  CreateVolumeInput,
  InputMaybe,
  StorageKeyValueInput as KeyValueInput,
  VolumeHostConnectorInput,
} from '../schema/generated/resolvers-types';
import type { GatewayContext } from '../domain/context';

/** An identifier argument for one backend: the shared rules, then that backend kind's rule for `position`. */
export const idArg = (b: Pick<VolumeBackend, 'kind'>, position: IdPosition, v: string, argument: string): string =>
  backendIdentifier(b.kind, position, v, argument);

/**
 * An identifier filter over several backends: refused when no selected backend could have such
 * an identifier (the first backend's reason is given); the shared rules always apply.
 */
export function filterIdArg(
  backends: readonly Pick<VolumeBackend, 'kind'>[],
  position: IdPosition,
  v: InputMaybe<string> | undefined,
  argument: string,
): string | undefined {
  if (v === null || v === undefined) return undefined;
  safeIdentifier(v, argument);
  const kinds = [...new Set(backends.map((b) => b.kind))];
  const errors = kinds.map((k) => accepts(k, position, v, argument)).filter((e): e is BadUserInputError => e !== null);
  if (kinds.length > 0 && errors.length === kinds.length) throw errors[0]!;
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
export function globalIdArg(
  ctx: GatewayContext,
  id: string,
  expected: GlobalIdKind | null,
  argument = 'id',
): GlobalIdParts {
  const p = decodeGlobalId(id, expected, argument);
  return checkGlobalIdParts(p, ctx.registry.forId(p.backend).kind, argument);
}

/**
 * A namespace argument; `*` (all namespaces) only where `allowAll`. With `backend`, that kind's
 * namespace rule applies too (a Nomad namespace, an OpenStack project id).
 */
export function namespaceArg(
  v: InputMaybe<string> | undefined,
  argument: string,
  fallback: string,
  allowAll = false,
  backend?: Pick<VolumeBackend, 'kind'>,
): string {
  if (v === null || v === undefined) return fallback;
  if (v === '*') {
    if (allowAll) return v;
    throw new BadUserInputError(`${argument}: "*" is only allowed when listing`, argument);
  }
  return backend ? idArg(backend, 'namespace', v, argument) : safeIdentifier(v, argument);
}

export const keyValues = (list: InputMaybe<readonly KeyValueInput[]> | undefined, argument: string): KeyValue[] =>
  keyValueList(list, argument);

/** Everything of `input` but its `neutral` fields: the fields only some kinds take, untouched, for the backend to parse. */
export function ownFields<T extends object, K extends keyof T>(input: T, ...neutral: K[]): Omit<T, K> {
  const own = { ...input } as Record<string, unknown>;
  for (const k of neutral) delete own[k as string];
  return own as Omit<T, K>;
}

const GIB = 1024 ** 3;

/** A byte count, if given. */
export const bytes = (v: InputMaybe<number> | undefined, argument: string): number | undefined =>
  v === null || v === undefined ? undefined : byteCount(v, argument);

/** A size given in bytes or, for backends that count in GiB, in GiB (not both). */
export function sizeArg(
  b: InputMaybe<number> | undefined,
  gib: InputMaybe<number> | undefined,
  bytesArg: string,
  gibArg: string,
): number | undefined {
  const hasBytes = b !== null && b !== undefined;
  const hasGib = gib !== null && gib !== undefined;
  if (hasBytes && hasGib) throw new BadUserInputError(`give ${bytesArg} or ${gibArg}, not both`, gibArg);
  if (hasGib) return positiveInt(gib, gibArg) * GIB;
  return bytes(b, bytesArg);
}

/** Refuses a minimum size above the maximum (0 or none: no maximum). */
export function capacity(min: number | undefined, max: number | undefined, minArg: string): void {
  if (min !== undefined && max !== undefined && max > 0 && min > max)
    throw new BadUserInputError(`${minArg} must not exceed the maximum size`, minArg);
}

/** The fields of a create every backend takes; any other is one kind's own part (`OwnCreateInput` in adapters/contract/call-inputs.ts). */
const CORE_CREATE_FIELDS: ReadonlySet<string> = new Set<keyof CreateVolumeInput>([
  'backend',
  'namespace',
  'name',
  'sizeBytes',
  'sizeGiB',
  'maxSizeBytes',
  'description',
  'metadata',
  'idempotencyKey',
]);

/**
 * Refuses a kind's own part given for a backend of another kind (named by the configured backend
 * that owns it), and a missing part the backend's kind requires.
 */
function checkOwnParts(
  input: CreateVolumeInput,
  b: Pick<VolumeBackend, 'id' | 'createInput'>,
  configured: readonly Pick<VolumeBackend, 'createInput'>[],
): void {
  const own = b.createInput;
  const given = input as unknown as Record<string, unknown>;
  for (const [field, v] of Object.entries(given)) {
    if (CORE_CREATE_FIELDS.has(field) || v === null || v === undefined || field === own?.field) continue;
    const owner = configured.find((c) => c.createInput?.field === field)?.createInput?.owner;
    throw new BadUserInputError(
      owner ? `input.${field} is for ${owner} backends` : `input.${field} is not for backend "${b.id}"`,
      `input.${field}`,
    );
  }
  if (own?.required && !given[own.field])
    throw new BadUserInputError(own.required(`input.${own.field}`), `input.${own.field}`);
}

/**
 * A create's input → the neutral spec, with the backend's own part passed on untouched (the
 * backend parses it); `configured` (the registry's backends) names the owner of a part given to
 * the wrong kind.
 */
export function createVolumeSpec(
  input: CreateVolumeInput,
  b: Pick<VolumeBackend, 'id' | 'kind' | 'createInput'>,
  configured: readonly Pick<VolumeBackend, 'createInput'>[] = [b],
): VolumeSpec {
  const min = sizeArg(input.sizeBytes, input.sizeGiB, 'input.sizeBytes', 'input.sizeGiB');
  const max = bytes(input.maxSizeBytes, 'input.maxSizeBytes');
  capacity(min, max, 'input.sizeBytes');
  checkOwnParts(input, b, configured);
  const own = b.createInput && (input as unknown as Record<string, unknown>)[b.createInput.field];
  return {
    namespace: namespaceArg(input.namespace, 'input.namespace', 'default', false, b),
    name: safeText(input.name, 'input.name', 256),
    capacityMinBytes: min,
    capacityMaxBytes: max,
    description: optionalText(input.description, 'input.description'),
    metadata: input.metadata ? keyValues(input.metadata, 'input.metadata') : undefined,
    own: own ?? undefined,
  };
}

export const optionalText = (v: InputMaybe<string> | undefined, argument: string, max?: number): string | undefined =>
  v === null || v === undefined ? undefined : safeText(v, argument, max);

/** A whole number ≥ 1 (sizes in GiB). */
export function positiveInt(v: number, argument: string): number {
  if (!Number.isSafeInteger(v) || v < 1)
    throw new BadUserInputError(`${argument} must be a whole number of 1 or more (got ${v})`, argument);
  return v;
}

const connectorText = (v: InputMaybe<string> | undefined, argument: string): string | undefined =>
  v === null || v === undefined ? undefined : safeText(v, argument, 255);

/** A typed host connector, each value bounded and checked. */
export function hostConnector(c: VolumeHostConnectorInput, argument: string): HostConnector {
  const names = (list: InputMaybe<readonly string[]> | undefined, a: string): string[] | undefined =>
    list ? bounded(list, a).map((x, i) => safeText(x, `${a}[${i}]`, 64)) : undefined;
  const out: HostConnector = { host: safeText(c.host, `${argument}.host`, 255) };
  const set = <K extends keyof HostConnector>(k: K, v: HostConnector[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('ip', connectorText(c.ip, `${argument}.ip`));
  set('initiator', connectorText(c.initiator, `${argument}.initiator`));
  set('wwpns', names(c.wwpns, `${argument}.wwpns`));
  set('wwnns', names(c.wwnns, `${argument}.wwnns`));
  set('nqn', connectorText(c.nqn, `${argument}.nqn`));
  set('platform', connectorText(c.platform, `${argument}.platform`));
  set('osType', connectorText(c.osType, `${argument}.osType`));
  set('multipath', c.multipath ?? undefined);
  set('doLocalAttach', c.doLocalAttach ?? undefined);
  set('systemUuid', connectorText(c.systemUuid, `${argument}.systemUuid`));
  return out;
}
