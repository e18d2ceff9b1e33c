/**
 * A backend module: everything the rest of the gateway needs to know about one kind of backend,
 * exported by that backend's folder (`adapters/<kind>/module.ts`) and listed once in the module
 * registry. Code outside a backend's folder asks the module; it never names a kind, a credential
 * header or a backend's detail type itself (issue 18; `test/architecture.test.ts` enforces it).
 */
import type { VolumeBackend } from './backend';
import type { BreakerBoard } from '../http/breaker';
import type { CallRecord } from '../http/transport';

/** Settings every backend has, whatever its kind (file `backends[]`, env `GATEWAY_BACKEND_<ID>_*`). */
export interface CommonBackendSettings {
  /** Unique id, used in global ids and `filter.backends`: letters, digits, `-`, `_`. */
  id: string;
  /** The module's config kind, e.g. `nomad`. */
  kind: string;
  /** Base URL; required by the kinds that talk HTTP ({@link BackendModule.needsUrl}). */
  url?: string;
  /** Deadline of one backend call in milliseconds. @default 10000 */
  timeoutMs: number;
  /** Most concurrent connections to this backend (per origin). @default 16 */
  maxConnections: number;
  /** Retries of an idempotent read after a connection failure or 502/503/504. @default 2 */
  readRetries: number;
}

/**
 * How a kind's callers authenticate: one header for every backend of the kind and a per-backend
 * form (`<header>-<backend id>`) that wins over it. Values pass through to the backend and are
 * never logged or returned.
 */
export interface CredentialSpec {
  /**
   * The header's canonical spelling, e.g. `X-Nomad-Token`; matched without regard to case. The
   * same name is the `connection_init` key on graphql-ws, and the per-backend form is
   * `<header>-<backend id>` ({@link perBackendHeader}).
   */
  readonly header: string;
  /** What the credential is, for people (GraphiQL's header editor, help): e.g. `Nomad ACL token`. */
  readonly describe: string;
  /** Stands for the value in examples. @default '<token>' */
  readonly placeholder?: string;
  /** A backend of this kind answers nothing without a credential (OpenStack): lists leave it out as NO_CREDENTIAL. */
  readonly required: boolean;
}

/** The header that carries a caller's credential for one backend only, e.g. `X-Nomad-Token-east`. */
export const perBackendHeader = (spec: Pick<CredentialSpec, 'header'>, backendId: string): string => `${spec.header}-${backendId}`;

/**
 * The kind's own client variables (Nomad's `NOMAD_ADDR`, an openrc file's `OS_*`), which configure
 * one backend of the kind when `GATEWAY_BACKENDS` is not set.
 */
export interface NativeEnv {
  /** Prefix of the client's variables, e.g. `NOMAD_`: never checked as unknown settings (set in bulk by tools). */
  readonly prefix: string;
  /** The variable whose presence configures the backend, e.g. `NOMAD_ADDR`. */
  readonly trigger: string;
  /** Its line in `--help`, e.g. `  NOMAD_ADDR / NOMAD_TOKEN            a single Nomad backend with id "nomad"`. @default none */
  readonly help?: string;
  /** The raw backend entry (as in the file's `backends[]`, with `id` and `kind`), or undefined when the trigger is unset. */
  read(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined;
}

/** What a module's factory gets besides its own settings. */
export interface BackendDeps {
  /** Told of every HTTP call (metrics, logs). @default none */
  onCall?: (r: CallRecord) => void;
  /** Circuit breakers shared by all backends (one per service endpoint). */
  breakers: BreakerBoard;
}

/**
 * One kind of backend. `S` is its parsed settings type (the common ones plus its own).
 * Optional members are facets: a kind without them simply has no such thing.
 */
export interface BackendModule<S extends CommonBackendSettings = CommonBackendSettings> {
  /** Config kind, as written in `GATEWAY_BACKENDS=id=kind@url` and the file's `kind`: lower case, e.g. `nomad`. */
  readonly kind: string;
  /** The model's and the schema's `BackendKind` value, e.g. `NOMAD`. */
  readonly modelKind: string;
  /** Name for people (banners, messages), e.g. `Nomad`. */
  readonly displayName: string;
  /** Whether `@url` is required in `GATEWAY_BACKENDS` and `url` in the file. */
  readonly needsUrl: boolean;
  /** The caller's credential. */
  readonly credential: CredentialSpec;
  /**
   * The kind's own settings, after the common ones are parsed: `raw` is the file entry (or the
   * env entry built by {@link envEntry}), `where` the setting path for errors (`backends[0]`).
   * @throws ConfigError naming the setting
   */
  parseSettings(raw: Record<string, unknown>, common: CommonBackendSettings, where: string): S;
  /**
   * The kind's own `GATEWAY_BACKEND_<ID>_<NAME>` variables with the file paths they set, below a
   * `backends[]` entry (`.` for nesting): `{ TOKEN: 'token', USERNAME: 'auth.username' }`. Read only
   * for backends listed in `GATEWAY_BACKENDS`; every other such name is unknown. File keys no
   * variable sets are in {@link fileSettings}.
   */
  readonly envSettings: Readonly<Record<string, string>>;
  /** The kind's own file keys that no variable sets (e.g. `auth.method`), for the unknown-key check. @default none */
  readonly fileSettings?: readonly string[];
  /**
   * The kind's own part of a `GATEWAY_BACKENDS` entry, from its variables: `get('TOKEN')` is
   * `GATEWAY_BACKEND_<ID>_TOKEN` as set (undefined when unset).
   * @default each {@link envSettings} name to its path
   */
  envEntry?(get: (name: string) => string | undefined): Record<string, unknown>;
  /** The kind's own client variables, if it has any. @default none */
  readonly nativeEnv?: NativeEnv;
  /** Builds the backend. */
  create(settings: S, deps: BackendDeps): VolumeBackend;
}
