/**
 * Global IDs: opaque, stable, unique across backends, and round-trippable to
 * (kind, backend id, scope, native id[, sub id]). Scope is the Nomad namespace or OpenStack project
 * (for Nomad snapshots, the plugin id, since Nomad scopes snapshots by plugin).
 *
 * Encoding: base64url of a JSON array. Decoding is strict: anything else is BAD_USER_INPUT and
 * never reaches a backend.
 */
import { BadUserInputError, within, type InputPlace } from './errors';
import { checkIdentifier, safeIdentifier, type IdPosition, type IdentifierRules } from './input';
import type { BackendKind } from './model';

/** Kinds of objects that carry a global id. */
export type GlobalIdKind = 'Volume' | 'Snapshot' | 'Attachment' | 'Consumer' | 'Plugin' | 'Operation' | 'Problem';

const KINDS: ReadonlySet<string> = new Set<GlobalIdKind>([
  'Volume',
  'Snapshot',
  'Attachment',
  'Consumer',
  'Plugin',
  'Operation',
  'Problem',
]);
const MAX_ENCODED_LENGTH = 1200;

/** The parts of a global id. */
export interface GlobalIdParts {
  kind: GlobalIdKind;
  /** Configured backend id. */
  backend: string;
  /** Namespace (Nomad), project (OpenStack), or plugin (Nomad snapshots). */
  scope: string;
  /** The backend's own id of the object. */
  nativeId: string;
  /** Second native id where one is not enough (attachment, consumer: the consumer's id). */
  subId?: string;
}

export function encodeGlobalId(p: GlobalIdParts): string {
  const parts = [p.kind, p.backend, p.scope, p.nativeId];
  if (p.subId !== undefined) parts.push(p.subId);
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

/**
 * Decodes and checks a global id. `expected` restricts the kind (null: any kind).
 * @throws BadUserInputError for anything that is not a well-formed id of the expected kind.
 */
export function decodeGlobalId(id: string, expected: GlobalIdKind | null, argument: InputPlace = 'id'): GlobalIdParts {
  const bad = (why: string): never => {
    throw BadUserInputError.at(argument, (a) => `${a} is not a valid ${expected ?? 'global'} id: ${why}`);
  };
  if (id.length === 0 || id.length > MAX_ENCODED_LENGTH) bad('wrong length');
  if (!/^[A-Za-z0-9_-]+$/.test(id)) bad('not an opaque id issued by this gateway');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return bad('not an opaque id issued by this gateway');
  }
  if (!Array.isArray(parsed) || parsed.length < 4 || parsed.length > 5 || !parsed.every((x) => typeof x === 'string')) {
    return bad('not an opaque id issued by this gateway');
  }
  const [kind, backend, scope, nativeId, subId] = parsed;
  if (!KINDS.has(kind!)) bad('unknown kind');
  if (expected !== null && kind !== expected) bad(`it is a ${kind} id`);
  safeIdentifier(backend!, within(argument, ' (backend)'));
  safeIdentifier(scope!, within(argument, ' (scope)'));
  // `*` means "every namespace" to Nomad; only the list filter may say it, never an id.
  if (scope === '*') bad('its scope is "*"');
  safeIdentifier(nativeId!, within(argument, ' (native id)'));
  if (subId !== undefined) safeIdentifier(subId, within(argument, ' (sub id)'));
  return { kind: kind as GlobalIdKind, backend: backend!, scope: scope!, nativeId: nativeId!, subId };
}

/**
 * What a backend kind accepts in its identifiers, supplied by its folder (`adapters/<kind>/ids.ts`)
 * through {@link defineIdentifierScheme}: the contract never imports a backend.
 */
export interface IdentifierScheme {
  /** Its own rules per position, after the shared ones; positions without a rule get the shared rules only. */
  readonly rules: IdentifierRules;
  /** What a snapshot id's scope is on this kind: a `namespace` (project), or a `plugin` (Nomad scopes snapshots by plugin). */
  readonly snapshotScope: Extract<IdPosition, 'namespace' | 'plugin'>;
}

/** Each backend kind's scheme, as its folder defined it. */
const SCHEMES = new Map<string, IdentifierScheme>();

/**
 * Gives the contract `kind`'s identifier scheme. Each backend folder's `ids.ts` calls it when it
 * is loaded (its backend imports it), so a kind that can be configured has its rules.
 * @throws Error when `kind` already has another scheme (two folders claiming one kind)
 */
export function defineIdentifierScheme(kind: BackendKind, scheme: IdentifierScheme): void {
  const known = SCHEMES.get(kind);
  if (known && known !== scheme) throw new Error(`backend kind ${kind} has two identifier schemes`);
  SCHEMES.set(kind, scheme);
}

/**
 * The scheme of `kind`.
 * @throws Error when no folder defined one: a backend whose ids were never checked must not pass silently
 */
function schemeOf(kind: BackendKind): IdentifierScheme {
  const scheme = SCHEMES.get(kind);
  if (!scheme)
    throw new Error(`backend kind ${kind} has no identifier scheme: its adapters/<kind>/ids.ts was not loaded`);
  return scheme;
}

/** Checks `value` for `position` on a backend of `kind`: the shared rules, then the kind's. */
export function backendIdentifier(
  kind: BackendKind,
  position: IdPosition,
  value: string,
  argument: InputPlace,
): string {
  return checkIdentifier(schemeOf(kind).rules, position, value, argument);
}

/** Positions of a global id's parts, by id kind and backend kind (null: shared rules only). */
function positions(
  kind: GlobalIdKind,
  backend: BackendKind,
): [scope: IdPosition | null, nativeId: IdPosition | null, subId: IdPosition | null] {
  switch (kind) {
    case 'Volume':
      return ['namespace', 'volume', null];
    case 'Attachment':
    case 'Consumer':
      return ['namespace', 'volume', 'consumer'];
    case 'Snapshot':
      return [schemeOf(backend).snapshotScope, 'snapshot', null];
    case 'Plugin':
      return [null, 'plugin', null];
    case 'Operation':
      return [null, null, null];
    case 'Problem':
      // The subject is the check's own (a status word, a server id): shared rules only.
      return ['namespace', 'volume', null];
  }
}

/**
 * Checks a decoded global id's parts with the rules of its backend's kind, exactly as strictly as
 * the same values given as arguments. Returns the parts unchanged.
 */
export function checkGlobalIdParts(p: GlobalIdParts, backend: BackendKind, argument: InputPlace = 'id'): GlobalIdParts {
  const [scope, nativeId, subId] = positions(p.kind, backend);
  if (scope) backendIdentifier(backend, scope, p.scope, within(argument, ' (scope)'));
  if (nativeId) backendIdentifier(backend, nativeId, p.nativeId, within(argument, ' (native id)'));
  if (subId && p.subId !== undefined) backendIdentifier(backend, subId, p.subId, within(argument, ' (sub id)'));
  return p;
}
