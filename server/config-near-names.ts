/**
 * Misspelled settings outside the gateway's own prefixes (issue 27, item 3): `PROT=4630`,
 * `INTROSPECTON=false`, `TRUSTED_DOCUMENT=/path` (which left the document allowlist off) must
 * stop start-up as `GATEWAY_BACKEND` does, while the environment containers, orchestrators, CI and
 * shells set (`HOSTNAME`, `HOME`, Kubernetes service links, `NOMAD_PORT_http` …) never does.
 * docs/configuration.md ("Unknown settings") states the rule; server/config-names.ts applies it.
 */

/** The edit distance with adjacent transpositions (optimal string alignment): `PROT` → `PORT` is 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** A name's words (split at `_`), each without one trailing S, so `HEADER` and `HEADERS` compare equal. */
function words(name: string): string[] {
  return name
    .split('_')
    .filter((w) => w !== '')
    .map((w) => (w.length > 2 && w.endsWith('S') ? w.slice(0, -1) : w));
}

const sameWords = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((w, i) => w === b[i]);

/** Whether `longer` is `shorter` with one word more, anywhere but first, the others in order. */
function oneWordMore(longer: readonly string[], shorter: readonly string[]): boolean {
  if (longer.length !== shorter.length + 1 || longer[0] !== shorter[0]) return false;
  return longer.some((_, i) => i > 0 && sameWords([...longer.slice(0, i), ...longer.slice(i + 1)], shorter));
}

/**
 * Whether variable `name` reads as a slip of the setting variable `known`. Either:
 * - one letter apart: one inserted, dropped, changed, or two neighbours swapped (`PROT`/`PORT`,
 *   `INTROSPECTON`, `EXECUTION_ENGIN`, `MANAGEMENT_PROT`, `LOG_MAX_BUFFER_BYTE`);
 * - or, both having at least two words: the same words with any S at a word's end ignored, in any
 *   order (`HEADER_TIMEOUT_MS`, `TIMEOUT_HEADERS_MS`), or one word more or fewer with the first
 *   word the same and the rest in order (`HEADERS_TIMEOUT`, `LOG_BUFFER_BYTES`).
 *
 * Two letters apart is not enough (`SSL_CERT_FILE`, OpenSSL's, is two from `TLS_CERT_FILE`), and a
 * word before the first (`APP_PORT`, `VOLUME_GATEWAY_PORT`) or after a one-word name
 * (`HOST_IP`, `PORT_HTTP`) is another program's name, not a slip.
 */
export function isNearMiss(name: string, known: string): boolean {
  if (name === known) return false;
  if (Math.abs(name.length - known.length) <= 1 && editDistance(name, known) <= 1) return true;
  const a = words(name);
  const b = words(known);
  if (Math.min(a.length, b.length) < 2) return false;
  if (sameWords([...a].sort(), [...b].sort())) return true;
  return oneWordMore(a, b) || oneWordMore(b, a);
}

/** The first of `known` that `name` is a near miss of ({@link isNearMiss}), the closest by edit distance on a tie. */
export function nearMissOf(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    if (!isNearMiss(name, k)) continue;
    const d = editDistance(name, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

/**
 * Prefixes that platforms set in bulk, never checked: Kubernetes' own (`KUBERNETES_SERVICE_HOST`
 * …), Node's and npm's (`NODE_OPTIONS`, `npm_config_*` under `npm run`), CI runners' (GitHub
 * Actions, GitLab), locales (`LC_ALL`), OpenTelemetry's. The backend modules add their clients'
 * (`NOMAD_`, Nomad's task environment; `OS_`, openrc files).
 */
export const PLATFORM_ENV_PREFIXES: readonly string[] = [
  'KUBERNETES_',
  'NODE_',
  'npm_',
  'GITHUB_',
  'RUNNER_',
  'ACTIONS_',
  'CI_',
  'GITLAB_',
  'LC_',
  'OTEL_',
];

/**
 * Kubernetes service links (`enableServiceLinks`, on by default): a Service named `redis` or
 * `gateway` puts `REDIS_PORT=tcp://…`, `GATEWAY_SERVICE_HOST` … into every pod of its namespace.
 * Not settings, and not the operator's mistake. A bare `<SERVICE>_PORT` is one only with a
 * link's value (`tcp://10.0.0.7:4000`): `MANAGMENT_PORT=9464` is a slip, not a link.
 */
export function isServiceLink(name: string, value: string | undefined): boolean {
  if (/^[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)$/.test(name))
    return true;
  return /^[A-Z0-9_]+_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value?.trim() ?? '');
}

/** Names spelled as the gateway's variables are (upper case, digits, `_`): others (`npm_*`, `Path`) are never a slip of one. */
export const settingShaped = (name: string): boolean => /^[A-Z][A-Z0-9_]*$/.test(name);
