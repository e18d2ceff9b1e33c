/**
 * Backend error texts → what a client may see. A real Cinder puts its Python traceback, with the
 * server's file paths, inside some 400 messages (test/fixtures/recorded/cinder-21/08-errors.md);
 * Nomad's RPC errors can name internal addresses (`dial tcp 10.0.0.5:4647: …`). The gateway keeps
 * the useful text (Cinder's "Invalid volume: …" first line, Nomad's multierror list) and drops
 * tracebacks, file paths and hosts, then bounds the length. Used by every adapter's `errors.ts`
 * for both `message` and `extensions.backendMessage`.
 */

/** Longest backend text passed on, in UTF-16 code units (an ellipsis marks a cut). */
export const MAX_UPSTREAM_MESSAGE = 500;

/** Where a stack trace starts; it and everything after it are dropped. */
const TRACE_START = [
  /\n?\s*Traceback \(most recent call last\):/, // Python
  /\n\s*File "[^"\n]+", line \d+/, // a Python frame without its header
  /\n?\s*goroutine \d+ \[[^\]]*\]:/, // Go panic dump
  /\n\s+at [\w$.<>]+\(/, // Java / JavaScript frames
];

const REPLACEMENTS: Array<[RegExp, string]> = [
  // URLs first: they contain hosts and paths.
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]+/gi, '[url]'],
  // IPv6 in brackets, or with "::"; then IPv4, each with an optional port.
  [/\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi, '[host]'],
  [/(?<![\w:])(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?(?![\w:])/gi, '[host]'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, '[host]'],
  // Cinder's volume service address `host@backend#pool`.
  [/\b[\w.-]+@[\w.-]+#[\w.-]+/g, '[host]'],
  // host:port — a dotted name or localhost with any port, or a bare service name with a 4–5 digit port.
  [/\b(?:[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+|localhost):\d{1,5}\b/gi, '[host]'],
  [/\b[a-z][a-z0-9-]*:\d{4,5}\b/gi, '[host]'],
  // Windows and Unix file paths (two or more segments). Device paths such as /dev/vdb are the
  // caller's own data (Nova mountpoints), so they stay.
  [/\b[a-z]:\\[^\s"'<>]+/gi, '[path]'],
  [/(?<![\w.:/-])(?!\/dev\/)(?:\/[\w.@+~-]+){2,}\/?/g, '[path]'],
];

/**
 * Sanitizes one backend error text: cuts any stack trace, replaces URLs, hosts and file paths,
 * drops control characters and blank lines, and bounds the length to `max`.
 */
export function sanitizeUpstreamMessage(text: string, max = MAX_UPSTREAM_MESSAGE): string {
  let s = text;
  for (const start of TRACE_START) {
    const m = start.exec(s);
    if (m) s = s.slice(0, m.index);
  }
  for (const [pattern, replacement] of REPLACEMENTS) s = s.replace(pattern, replacement);
  s = s
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .join('\n')
    .trim();
  return bound(s, max);
}

/** Cuts to `max` code units without splitting a surrogate pair. */
function bound(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${s.slice(0, end)}…`;
}
