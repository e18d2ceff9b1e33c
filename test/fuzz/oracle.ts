/**
 * What counts as a finding for one exchange. The assertions are about the gateway's safety, not
 * about success: validation errors, limits and BAD_USER_INPUT are the expected answers to
 * hostile input. The simulators are healthy and never faulted in a fuzz run, so:
 * - a 5xx from the gateway is its own fault unless a backend answered 5xx (or not at all) during
 *   the same exchange (or it is the unbuilt IDE page's deliberate 503); the same goes for BACKEND_UNAVAILABLE/BACKEND_TIMEOUT in the body (an
 *   error blamed on a backend that was never asked, or answered fine, is the gateway's);
 * - INTERNAL_SERVER_ERROR anywhere in the body is a finding (`internal-error` for a field error,
 *   `internal-error-request` for an error of the whole request);
 * - every backend call must be in the route table (route-table.ts).
 */
import type { ExchangeResult } from './http-client';
import { describeCall, routeViolations, type BackendCall } from './route-table';

export type FindingKind =
  | 'crash'
  | 'unhandled-rejection'
  | 'timeout'
  | 'no-answer'
  | 'oversized-response'
  | 'gateway-5xx'
  | 'internal-error'
  | 'internal-error-request'
  | 'misattributed-backend-error'
  | 'off-route'
  | 'rss';

export interface Finding {
  kind: FindingKind;
  detail: string;
}

/** Codes that blame a backend; they need a backend that failed to be true. */
const BACKEND_BLAME = new Set(['BACKEND_UNAVAILABLE', 'BACKEND_TIMEOUT']);

export interface Observation {
  result: ExchangeResult;
  calls: BackendCall[];
  /** Unhandled rejections and uncaught exceptions seen since the previous exchange. */
  processErrors: Array<{ kind: 'unhandled-rejection' | 'crash'; message: string }>;
  /** RSS when the request was sent, and its peak until the answer. */
  rssBeforeBytes: number;
  rssBytes: number;
  rssLimitBytes: number;
}

/**
 * RSS stays high after a spike (V8 keeps the pages), so a request is blamed only if RSS went over
 * the bound during it and it added this much itself; otherwise shrinking would end on any request
 * that came after the spike. The bound still holds at the end of a property (run.ts).
 */
const RSS_GROWTH_BLAMED = 64 * 1_048_576;

export function findings(o: Observation): Finding[] {
  const out: Finding[] = o.processErrors.map((e) => ({ kind: e.kind, detail: e.message }));
  const { response, failure } = o.result;
  if (failure?.kind === 'timeout')
    out.push({ kind: 'timeout', detail: `no complete answer within ${failure.afterMs} ms` });
  if (failure?.kind === 'oversized')
    out.push({ kind: 'oversized-response', detail: `answer exceeded ${failure.bytes} bytes` });
  if (failure?.kind === 'no-answer') out.push({ kind: 'no-answer', detail: failure.message });
  const backendFailed = o.calls.some((c) => c.status === 0 || c.status >= 500);
  if (response) {
    if (response.status >= 500 && !backendFailed && !unbuiltIde(response))
      out.push({ kind: 'gateway-5xx', detail: `status ${response.status}: ${response.text.slice(0, 300)}` });
    const codes = errorCodes(response.text);
    // Field errors (with a path: a resolver threw) and request errors (none) are told apart, so a
    // long run that ignores one kind still finds the other.
    const internal = errorsWithCode(response.text, 'INTERNAL_SERVER_ERROR');
    for (const [kind, errs] of [
      ['internal-error', internal.filter((e) => e.path !== undefined)],
      ['internal-error-request', internal.filter((e) => e.path === undefined)],
    ] as const) {
      if (errs.length > 0)
        out.push({ kind, detail: `${JSON.stringify(errs.slice(0, 3)).slice(0, 600)} (${codes.length} errors in all)` });
    }
    const blamed = codes.filter((c) => BACKEND_BLAME.has(c));
    if (blamed.length > 0 && !backendFailed) {
      out.push({
        kind: 'misattributed-backend-error',
        detail: `${blamed.join(', ')} while every backend call answered below 500 (${o.calls.length} calls): ${response.text.slice(0, 400)}`,
      });
    }
  }
  for (const c of o.calls) {
    const why = routeViolations(c);
    if (why.length > 0) out.push({ kind: 'off-route', detail: `${describeCall(c)}: ${why.join('; ')}` });
  }
  if (o.rssBytes > o.rssLimitBytes && o.rssBytes - o.rssBeforeBytes > RSS_GROWTH_BLAMED) {
    out.push({
      kind: 'rss',
      detail: `RSS went from ${mb(o.rssBeforeBytes)} to ${mb(o.rssBytes)} MB during this request, over the bound of ${mb(o.rssLimitBytes)} MB`,
    });
  }
  return out;
}

/** The IDE page's deliberate 503 in a checkout where `npm run build` has not run (server/graphiql). */
const unbuiltIde = (r: { status: number; headers: Record<string, string> }): boolean =>
  r.status === 503 &&
  (r.headers['content-type'] ?? '').startsWith('text/html') &&
  r.headers['content-security-policy'] !== undefined;

export const mb = (b: number): number => Math.round(b / 1_048_576);

type GraphQLError = { message?: unknown; path?: unknown; extensions?: { code?: unknown } };

/** The `errors` of a GraphQL response body (none when it is not one). */
function errorsOf(text: string): GraphQLError[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  const errors = (body as { errors?: unknown } | null)?.errors;
  return Array.isArray(errors) ? (errors as GraphQLError[]) : [];
}

const errorsWithCode = (text: string, code: string): GraphQLError[] =>
  errorsOf(text).filter((e) => e?.extensions?.code === code);

/** `extensions.code` of every error in a GraphQL response body. */
export function errorCodes(text: string): string[] {
  return errorsOf(text)
    .map((e) => e?.extensions?.code)
    .filter((c): c is string => typeof c === 'string');
}
