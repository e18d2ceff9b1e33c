/**
 * A kind's part of demo mode: its simulator(s) started on loopback and seeded with demo data, the
 * backend entries the gateway serves them with, the credentials a demo caller sends, and the
 * demo activity's steps. Each simulator folder exports one (`simulators/<kind>/demo-backend.ts`),
 * the kind's registration names it (server/kinds/), and `server/demo.ts` puts them together
 * without naming a kind.
 *
 * Defined here, on the simulators' side, because simulators import no gateway code
 * (test/architecture.test.ts); the gateway's types (`BackendEntry`, `DemoActivityStep`) accept
 * these shapes as they are.
 */

/**
 * A backend as the gateway's config takes it: its id, config kind and URL, plus the kind's own
 * settings (`token`, `auth` …), as a config file's `backends[]` entry writes them. The gateway adds
 * the common settings' defaults (timeout, connections, retries).
 */
export interface DemoBackendEntry {
  readonly id: string;
  /** The backend module's config kind, e.g. `nomad`. */
  readonly kind: string;
  readonly url?: string;
  readonly [setting: string]: unknown;
}

/**
 * A credential the demo hands to callers. Its header is the gateway's to name (from the kind's
 * module): the kind's shared header, or the per-backend form that wins over it.
 */
export interface DemoCredential {
  /** Id of the backend it is for (one of the part's {@link DemoBackendEntry} ids). */
  readonly backend: string;
  /** `kind`: sent in the kind's shared header (all its backends); `backend`: in the backend's own header. */
  readonly scope: 'kind' | 'backend';
  readonly token: string;
  /** What it is, for the banner's line, e.g. `management, demo only`. */
  readonly note: string;
}

/** One kind of change the demo activity makes, e.g. a claim/release; its step decides which of the two is next. */
export interface DemoActivityStep {
  readonly name: string;
  run(signal: AbortSignal): Promise<string> | string;
}

/** What a kind's demo part started. `Info` is what tests and tools may read of it (its URLs, tokens, ids). */
export interface StartedDemoPart<Info> {
  /** The backends it serves, in the order the gateway lists them. */
  readonly backends: readonly DemoBackendEntry[];
  /** The credentials a demo caller sends, in the banner's order. */
  readonly credentials: readonly DemoCredential[];
  /** Further banner lines, each about one backend (`backend: text`), after the credentials' lines. @default none */
  readonly notes?: ReadonlyArray<{ readonly backend: string; readonly text: string }>;
  /** Its demo activity steps; empty when started without activity. */
  readonly steps: readonly DemoActivityStep[];
  readonly info: Info;
  /** Closes its simulators. */
  close(): Promise<void>;
}

/** A kind's demo part, as its simulator folder exports it. */
export interface DemoPart<Info = unknown> {
  /** What it serves, for the banner's first line, e.g. `two simulated Nomad clusters`. */
  readonly serves: string;
  /**
   * Tokens the demo's GraphiQL page hands out that can change the demo data, named in the warning
   * printed when the demo listens beyond loopback. Fixed, so the warning needs no started demo.
   */
  readonly exposedTokens: readonly string[];
  /**
   * Starts and seeds its simulators on 127.0.0.1 (any free port). On a failure it closes what it
   * started before throwing.
   * @param o.activity whether to seed the activity's own data and return its steps
   */
  start(o: { activity: boolean }): Promise<StartedDemoPart<Info>>;
}
