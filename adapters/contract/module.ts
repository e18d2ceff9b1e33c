/**
 * A backend module: everything the rest of the gateway needs to know about one kind of backend,
 * exported by that backend's folder (`adapters/<kind>/module.ts`) and registered once, by the
 * kind's registration (server/kinds/registered.ts). Code outside a backend's folder asks the module; it never names a kind, a credential
 * header or a backend's detail type itself (issue 18; `test/architecture/backend-knowledge.test.ts` enforces it).
 */
import type { VolumeBackend } from './backend';
import type { BreakerBoard } from './breaker';
import type { FacetNames } from './capabilities';
import { httpUrl, integer, setting, text, type SettingsGroup, type SettingValues } from './settings';

/**
 * The settings every backend has, whatever its kind: keys of a file `backends[]` entry, `env` the
 * part after `GATEWAY_BACKEND_<ID>_`. `id`, `kind` and `url` come from the `GATEWAY_BACKENDS`
 * entry (`id=kind[@url]`) in the environment.
 */
export const COMMON_BACKEND_SETTINGS = {
  id: setting({
    rule: text({
      pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/,
      message: 'must be 1-63 letters, digits, "-" or "_", starting with a letter or digit',
    }),
    doc: 'Unique id, used in global ids, errors (`extensions.backend`) and `filter.backends`: 1-63 letters, digits, `-`, `_`. Changing it changes every id.',
  }),
  kind: setting({ rule: text(), doc: "The backend module's config kind." }),
  url: setting({
    rule: httpUrl,
    doc: 'Base URL, `http(s)://host:port[/prefix]`, without credentials, query or fragment; required by the kinds that talk HTTP.',
  }),
  timeoutMs: setting({
    env: 'TIMEOUT_MS',
    rule: integer(1, 600_000),
    default: 10_000,
    doc: 'Deadline of one backend call in milliseconds, queueing and retries included.',
  }),
  maxConnections: setting({
    env: 'MAX_CONNECTIONS',
    rule: integer(1, 1024),
    default: 16,
    doc: 'Most keep-alive connections (and so concurrent calls) to this backend, per origin.',
  }),
  readRetries: setting({
    env: 'READ_RETRIES',
    rule: integer(0, 10),
    default: 2,
    doc: 'Retries of an idempotent read after a connection failure or 502/503/504; writes are never retried.',
  }),
} as const satisfies SettingsGroup;

/** Settings every backend has, whatever its kind ({@link COMMON_BACKEND_SETTINGS}: file `backends[]`, env `GATEWAY_BACKEND_<ID>_*`). */
export interface CommonBackendSettings {
  /** Unique id, used in global ids and `filter.backends`: letters, digits, `-`, `_`. */
  id: string;
  /** The module's config kind, e.g. `nomad`. */
  kind: string;
  /** Base URL; required by the kinds that talk HTTP ({@link BackendModule.needsUrl}). */
  url?: string;
  /** Deadline of one backend call in milliseconds. @default {@link COMMON_BACKEND_SETTINGS}`.timeoutMs` */
  timeoutMs: number;
  /** Most concurrent connections to this backend (per origin). @default {@link COMMON_BACKEND_SETTINGS}`.maxConnections` */
  maxConnections: number;
  /** Retries of an idempotent read after a connection failure or 502/503/504. @default {@link COMMON_BACKEND_SETTINGS}`.readRetries` */
  readRetries: number;
}

/** The common settings' defaults (`timeoutMs`, `maxConnections`, `readRetries`): for backends built in code (the demo, tests). */
export const COMMON_BACKEND_DEFAULTS = Object.freeze({
  timeoutMs: COMMON_BACKEND_SETTINGS.timeoutMs.default,
  maxConnections: COMMON_BACKEND_SETTINGS.maxConnections.default,
  readRetries: COMMON_BACKEND_SETTINGS.readRetries.default,
}) satisfies Partial<SettingValues<typeof COMMON_BACKEND_SETTINGS>>;

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
export const perBackendHeader = (spec: Pick<CredentialSpec, 'header'>, backendId: string): string =>
  `${spec.header}-${backendId}`;

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

/** What the HTTP transport records of each call (`BackendDeps.onCall`): never headers or bodies, so never credentials. */
export interface CallRecord {
  backend: string;
  method: string;
  /** Endpoint template, e.g. `GET /v1/volume/csi/:id`. */
  endpoint: string;
  /** HTTP status, or 0 when no answer came. */
  status: number;
  durationMs: number;
  /** Gateway error code when the call failed at the transport level. */
  failure?: string;
  requestId?: string;
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
   * The kind's own settings, declared once: keys below its `backends[]` entry (nested as in the
   * file, e.g. `auth.username`), each `env` the part after `GATEWAY_BACKEND_<ID>_` (`TOKEN`).
   * The config file's schema, the unknown-name check, the env form of an entry and the
   * documentation test are derived from them; {@link parseSettings} reads them.
   */
  readonly settings: SettingsGroup;
  /**
   * Completes the kind's own part of a `GATEWAY_BACKENDS` entry: `entry` holds each of its
   * {@link settings} whose `GATEWAY_BACKEND_<ID>_<env>` variable is set, at its path; the module
   * adds what the variables imply (e.g. a credential's method). @default the entry as it is
   */
  envEntry?(entry: Record<string, unknown>): Record<string, unknown>;
  /** The kind's own client variables, if it has any. @default none */
  readonly nativeEnv?: NativeEnv;
  /**
   * `--help`'s example of a gateway with one backend of this kind: the environment to start it
   * with (`{ NOMAD_ADDR: 'https://nomad.example.com:4646' }`) and what that sets up. @default none
   */
  readonly helpExample?: { readonly env: Readonly<Record<string, string>>; readonly says: string };
  /**
   * What the kind calls the facets it has, where its words say more than the neutral ones
   * (`FACET_NAMES`): e.g. `Cinder volume actions`. UNSUPPORTED_BY_BACKEND messages use them.
   * @default the neutral names
   */
  readonly facetNames?: FacetNames;
  /** Builds the backend. */
  create(settings: S, deps: BackendDeps): VolumeBackend;
}
