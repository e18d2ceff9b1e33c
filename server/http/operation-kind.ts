/**
 * The kind of the operation a document would execute, found by lexing only (no AST), so the edge
 * can refuse a `subscription` over HTTP before Apollo runs it. Why: the schema has no
 * `Subscription` root yet, and graphql-js 16 has no validation rule for a missing root type, so
 * Apollo passes the document to `execute`, which throws an uncoded "Schema is not configured to
 * execute subscription operation" that surfaces as INTERNAL_SERVER_ERROR. Once the schema has a
 * `Subscription` root, `execute` over HTTP would still be wrong: subscriptions need a stream
 * (graphql-ws).
 */
import { Lexer, Source, TokenKind } from 'graphql';

export type OperationKind = 'query' | 'mutation' | 'subscription';

const OPERATION = new Set(['query', 'mutation', 'subscription']);
const OPEN = new Set<TokenKind>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L]);
const CLOSE = new Set<TokenKind>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R]);

/**
 * The kind of the operation `operationName` selects (or the only operation). `undefined` when the
 * document does not lex or the selection is ambiguous or unknown: GraphQL execution then answers
 * with its own parse or validation error.
 */
export function operationKind(document: string, operationName?: string | null): OperationKind | undefined {
  const ops: Array<{ kind: OperationKind; name?: string }> = [];
  try {
    const lexer = new Lexer(new Source(document));
    let depth = 0;
    // Inside a definition's head (`query Q($v: T) @d`), until its selection set opens.
    let inHead = false;
    // The operation whose head this is; it counts once its selection set opens.
    let pending: { kind: OperationKind; name?: string } | undefined;
    for (let t = lexer.advance(); t.kind !== TokenKind.EOF; t = lexer.advance()) {
      if (depth === 0 && !inHead) {
        if (t.kind === TokenKind.NAME) {
          inHead = true;
          const next = lexer.lookahead();
          pending = OPERATION.has(t.value)
            ? { kind: t.value as OperationKind, name: next.kind === TokenKind.NAME ? next.value : undefined }
            : undefined;
          continue;
        }
        if (t.kind === TokenKind.BRACE_L) ops.push({ kind: 'query' });
      }
      if (OPEN.has(t.kind)) {
        if (depth === 0 && t.kind === TokenKind.BRACE_L) {
          if (pending) ops.push(pending);
          pending = undefined;
          inHead = false;
        }
        depth++;
      } else if (CLOSE.has(t.kind)) depth--;
    }
  } catch {
    return undefined;
  }
  if (typeof operationName === 'string' && operationName !== '') return ops.find((o) => o.name === operationName)?.kind;
  return ops.length === 1 ? ops[0]!.kind : undefined;
}
