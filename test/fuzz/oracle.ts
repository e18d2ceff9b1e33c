/**
 * What counts as a finding for one exchange. The assertions are about the gateway's safety, not
 * about success: validation errors, limits and BAD_USER_INPUT are the expected answers to
 * hostile input. The simulators are healthy and never faulted in a fuzz run, so:
 * - a 5xx from the gateway is its own fault unless a backend answered 5xx (or not at all) during
 *   the same exchange (or it is the unbuilt IDE page's deliberate 503); the same goes for BACKEND_UNAVAILABLE/BACKEND_TIMEOUT in the body (an
 *   error blamed on a backend that was never asked, or answered fine, is the gateway's);
 * - INTERNAL_SERVER_ERROR anywhere in the body is a finding;
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
  rssBytes: number;
  rssLimitBytes: number;
}

export function findings(o: Observation): Finding[] {
  const out: Finding[] = o.processErrors.map((e) => ({ kind: e.kind, detail: e.message }));
  const { response, failure } = o.result;
  if (failure?.kind === 'timeout') out.push({ kind: 'timeout', detail: `no complete answer within ${failure.afterMs} ms` });
  if (failure?.kind === 'oversized') out.push({ kind: 'oversized-response', detail: `answer exceeded ${failure.bytes} bytes` });
  if (failure?.kind === 'no-answer') out.push({ kind: 'no-answer', detail: failure.message });
  const backendFailed = o.calls.some((c) => c.status === 0 || c.status >= 500);
  if (response) {
    if (response.status >= 500 && !backendFailed && !unbuiltIde(response)) out.push({ kind: 'gateway-5xx', detail: `status ${response.status}: ${response.text.slice(0, 300)}` });
    const codes = errorCodes(response.text);
    if (codes.includes('INTERNAL_SERVER_ERROR')) {
      out.push({ kind: 'internal-error', detail: response.text.slice(0, 500) });
    }
    const blamed = codes.filter((c) => BACKEND_BLAME.has(c));
    if (blamed.length > 0 && !backendFailed) {
      out.push({ kind: 'misattributed-backend-error', detail: `${blamed.join(', ')} while every backend call answered below 500 (${o.calls.length} calls): ${response.text.slice(0, 400)}` });
    }
  }
  for (const c of o.calls) {
    const why = routeViolations(c);
    if (why.length > 0) out.push({ kind: 'off-route', detail: `${describeCall(c)}: ${why.join('; ')}` });
  }
  if (o.rssBytes > o.rssLimitBytes) out.push({ kind: 'rss', detail: `RSS ${mb(o.rssBytes)} MB over the bound of ${mb(o.rssLimitBytes)} MB` });
  return out;
}

/** The IDE page's deliberate 503 in a checkout where `npm run build` has not run (server/graphiql). */
const unbuiltIde = (r: { status: number; headers: Record<string, string>; text: string }): boolean =>
  r.status === 503 && (r.headers['content-type'] ?? '').startsWith('text/html') && r.text.includes('GraphiQL is not built');

const mb = (b: number): number => Math.round(b / 1_048_576);

/** `extensions.code` of every error in a GraphQL response body (none when it is not one). */
export function errorCodes(text: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((e) => (e as { extensions?: { code?: unknown } })?.extensions?.code).filter((c): c is string => typeof c === 'string');
}
