/**
 * The token limit is graphql-js's own `parse(source, { maxTokens })`: the parser counts tokens
 * as it goes and stops at the first one over, so an oversized document costs no more than
 * `maxTokens` tokens of work. (GraphQL Armor's max-tokens does the same through a Proxy around
 * the lexer and an Envelop hook that Apollo has no equivalent of.) graphql-js reports it as a
 * plain syntax error, so {@link tokenLimitError} recognises it by position, not by message.
 */
import { GraphQLError, Lexer, Source, TokenKind, type ParseOptions } from 'graphql';
import { ErrorCode } from '../../adapters/contract/errors';
import { OperationLimitError } from './errors';

export function parseOptions(maxTokens: number): ParseOptions {
  return { maxTokens };
}

/**
 * When `err` (a parse error) is graphql-js refusing the token `maxTokens + 1`, the typed error
 * for it; else undefined. graphql-js throws that refusal at the start of that very token, before
 * looking at it, so a document whose token `maxTokens + 1` starts exactly where the error points
 * was refused for its size. Re-lexing stops there, so this costs at most `maxTokens` tokens.
 */
export function tokenLimitError(err: unknown, maxTokens: number): OperationLimitError | undefined {
  if (!(err instanceof GraphQLError) || !err.source || err.positions?.length !== 1) return undefined;
  const at = err.positions[0];
  try {
    const lexer = new Lexer(new Source(err.source.body));
    for (let n = 1; n <= maxTokens + 1; n++) {
      const t = lexer.advance();
      if (t.kind === TokenKind.EOF || t.start > (at ?? -1)) return undefined;
      if (n === maxTokens + 1 && t.start === at) {
        return new OperationLimitError(
          ErrorCode.MaxTokensLimit,
          `the document has more than ${maxTokens} tokens (MAX_TOKENS)`,
          'maxTokens',
          maxTokens,
        );
      }
    }
  } catch {
    // A lexical error before that token: a plain syntax error.
  }
  return undefined;
}
