/**
 * The GraphQL request parameters of an HTTP request (GraphQL over HTTP: the JSON body of a POST,
 * the query string of a GET), and the same request with checked parameters put back.
 */
import { type OperationParams } from './operation-screen';

const NAMES = ['query', 'operationName', 'variables', 'extensions', 'documentId'] as const;

/** Parameters of a POST body (a JSON object; anything else has none) or a GET query string. */
export function readParams(method: string, body: unknown, search: URLSearchParams): OperationParams | undefined {
  if (method === 'POST') return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : undefined;
  if (method !== 'GET') return undefined;
  const p: OperationParams = {};
  for (const name of NAMES) {
    const v = search.get(name);
    if (v === null) continue;
    // JSON-encoded on GET; a value that does not parse is left for GraphQL execution to refuse.
    if (name === 'variables' || name === 'extensions') {
      try {
        p[name] = JSON.parse(v);
      } catch {
        p[name] = v;
      }
    } else p[name] = v;
  }
  return p;
}

/** The POST body or GET query string carrying `next` instead of the original parameters. */
export function writeParams(
  method: string,
  body: unknown,
  search: URLSearchParams,
  next: OperationParams,
): { body: unknown; search: string } {
  if (method === 'POST') {
    const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const name of NAMES) {
      if (next[name] === undefined) delete out[name];
      else out[name] = next[name];
    }
    return { body: out, search: search.toString() === '' ? '' : `?${search}` };
  }
  const s = new URLSearchParams(search);
  for (const name of NAMES) {
    const v = next[name];
    if (v === undefined) s.delete(name);
    else s.set(name, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return { body, search: `?${s}` };
}
