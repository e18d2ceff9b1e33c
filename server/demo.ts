/**
 * Demo mode: with no backends configured, the gateway starts simulated backends with demo data
 * on loopback and serves them. What is simulated comes from the kinds' demo parts (each kind's
 * registration names its simulators/<kind>/demo-backend.ts: its simulators, backend entries,
 * credentials and activity steps); this file puts them together and names the credentials' headers
 * from the kinds' modules.
 */
import type { DemoActivityStep, DemoCredential, StartedDemoPart } from '../simulators/common/demo-backend';
import { COMMON_BACKEND_DEFAULTS, perBackendHeader } from '../adapters/contract/module';
import { demoParts, moduleForKind, type DemoInfo } from './kinds';
import type { BackendEntry } from './config';
import { isLoopbackHost } from './http/origin';
import { demoActivityFromEnv, startDemoActivity, type DemoActivity, type DemoActivityOptions } from './demo-activity';

export interface DemoBackends {
  backends: BackendEntry[];
  /** What each kind's demo part started, by config kind (its tokens, URLs, ids; demo data only). */
  kinds: DemoInfo;
  /** Every header a demo caller sends to read and write all demo backends. */
  headers: Record<string, string>;
  /** GraphiQL's headers editor pre-filled with {@link headers}, so the demo works from the browser. */
  graphiqlHeaders: string;
  /** What the demo serves and the credentials to send, one line each, printed at start (header names from the backends' modules). */
  banner: string[];
  /** The running demo activity (server/demo-activity.ts); undefined when it is off. */
  activity?: DemoActivity;
  /** Stops the activity, then the simulated backends. */
  stop(): Promise<void>;
}

export interface DemoBackendsOptions {
  /**
   * Changes the demo backends make by themselves, one step every `intervalMs`, taking turns over
   * the demo parts' steps (server/demo-activity.ts). `false` turns it off.
   * @default from the environment: on every 5 s; `DEMO_ACTIVITY=0` off, `DEMO_ACTIVITY_INTERVAL_MS` the interval
   */
  activity?: DemoActivityOptions | false;
}

/**
 * The warning to print when the demo listens beyond loopback (`HOST` set explicitly, the demo's
 * default being 127.0.0.1): its GraphiQL page hands out the demo's management tokens to anyone
 * who can reach the port. Undefined on loopback.
 */
export function demoExposureWarning(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  const tokens = demoParts().flatMap(({ part }) => part.exposedTokens);
  return `WARNING: demo mode is listening on ${host} (HOST), not only on loopback: anyone who can reach this port gets the GraphiQL page and with it the demo's management tokens (${tokens.join(', ')}), and can change the demo data. Unset HOST (or HOST=127.0.0.1) to keep the demo on this machine.`;
}

/** `a`, `a and b`, `a, b and c`. */
const enumerate = (items: readonly string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * The header a demo credential goes in, from its backend's module: the kind's shared header or
 * the per-backend one.
 * @throws Error when the credential names no backend of its part, or the kind has no module
 */
function credentialHeader(c: DemoCredential, backends: readonly BackendEntry[]): string {
  const b = backends.find((x) => x.id === c.backend);
  const spec = b && moduleForKind(b.kind)?.credential;
  if (!spec) throw new Error(`demo credential for ${c.backend}: no such backend, or no module for its kind`);
  return c.scope === 'backend' ? perBackendHeader(spec, c.backend) : spec.header;
}

export async function startDemoBackends(o: DemoBackendsOptions = {}): Promise<DemoBackends> {
  const activityOptions = o.activity ?? demoActivityFromEnv(process.env);
  const started: Array<[string, StartedDemoPart<unknown>]> = [];
  const close = (): Promise<unknown> => Promise.all(started.map(([, s]) => s.close()));
  try {
    for (const { kind, part } of demoParts())
      started.push([kind, await part.start({ activity: activityOptions !== false })]);
    const backends: BackendEntry[] = started.flatMap(([, s]) =>
      s.backends.map((b) => ({ ...COMMON_BACKEND_DEFAULTS, ...b })),
    );
    // Each part's credentials with their headers, in the banner's order.
    const credentials = started.map(([, s]) =>
      s.credentials.map((c) => ({ ...c, header: credentialHeader(c, backends) })),
    );
    // Shared headers first, then the per-backend ones that win over them.
    const headers: Record<string, string> = {};
    for (const scope of ['kind', 'backend'] as const) {
      for (const c of credentials.flat().filter((x) => x.scope === scope)) {
        if (c.header in headers) throw new Error(`demo credentials: two for header ${c.header}`);
        headers[c.header] = c.token;
      }
    }
    const banner = [
      `Demo mode: serving ${enumerate(demoParts().map(({ part }) => part.serves))} with demo data.`,
      ...started.flatMap(([, s], i) => [
        ...credentials[i]!.map((c) => `  ${c.backend}: ${c.header}: ${c.token}   (${c.note})`),
        ...(s.notes ?? []).map((n) => `  ${n.backend}: ${n.text}`),
      ]),
    ];
    const graphiqlHeaders = `{\n  // Demo credentials (demo data only): your own tokens go here against real backends.\n${Object.entries(
      headers,
    )
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n')}\n}`;
    const steps: DemoActivityStep[] = started.flatMap(([, s]) => s.steps);
    const activity = activityOptions ? startDemoActivity(steps, activityOptions) : undefined;
    const kinds = Object.fromEntries(started.map(([kind, s]) => [kind, s.info])) as DemoInfo;
    const stop = async (): Promise<void> => {
      await activity?.stop();
      await close();
    };
    return { backends, kinds, headers, graphiqlHeaders, banner, ...(activity ? { activity } : {}), stop };
  } catch (err) {
    await close();
    throw err;
  }
}
