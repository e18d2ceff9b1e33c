/**
 * A `subscribe` message's operation, checked as HTTP checks a request: trusted documents (when
 * on), the token limit at parse, subscriptions only, graphql-js's validation with the limits' rules (depth, aliases,
 * directives, introspection), variables, then the cost estimate with the
 * variables. The limits are server/limits' own (the same objects Apollo is given), not copies.
 */
import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  OperationTypeNode,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import type { TrustedDocumentsConfig } from '../http/config';
import { EdgeError } from '../http/errors';
import { screenOperation } from '../http/operation-screen';
import type { OperationLimits } from '../limits';
import { NotSupportedOverWebSocketError } from './errors';

export interface OperationCheckOptions {
  /** The executable schema (already wrapped by the limits). */
  schema: GraphQLSchema;
  limits: OperationLimits;
  /** Trusted documents, when on: the socket serves the same list as HTTP. */
  trusted?: TrustedDocumentsConfig;
  /** Documents that already parsed and validated, by query text; none when left out. */
  documents?: ValidDocuments;
}

/**
 * Documents that parsed and passed validation, by their query text (LRU). Parse and validation
 * depend on the text, the schema and the rules only, which are fixed per transport; many clients
 * subscribe with the same text, and sharing the one parsed document also lets the hub group them
 * cheaply. Failures are not kept: they are checked (and counted) every time.
 */
export class ValidDocuments {
  readonly #map = new Map<string, KnownDocument>();

  /** @param max entries kept. @param maxQueryChars longer texts are not kept. */
  constructor(
    readonly max = 500,
    readonly maxQueryChars = 16_384,
  ) {}

  get(query: string): KnownDocument | undefined {
    const d = this.#map.get(query);
    if (d) {
      this.#map.delete(query);
      this.#map.set(query, d);
    }
    return d;
  }

  set(query: string, document: DocumentNode): void {
    if (query.length > this.maxQueryChars) return;
    this.#map.delete(query);
    this.#map.set(query, { query, document });
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value!);
  }
}

/** A document that passed, with the one copy of its text that every subscriber of it can share. */
export interface KnownDocument {
  query: string;
  document: DocumentNode;
}

/** What graphql-ws then executes. */
export interface CheckedOperation {
  document: DocumentNode;
  /** The query text; the cached copy when the document was known, so equal texts share one string. */
  query: string;
  operationName: string | undefined;
  variableValues: Record<string, unknown> | undefined;
}

const coded = (e: GraphQLError, code: string): GraphQLError =>
  new GraphQLError(e.message, {
    nodes: e.nodes,
    source: e.source,
    positions: e.positions,
    originalError: e.originalError ?? e,
    extensions: { ...e.extensions, code },
  });

/** Checks the operation; the errors are for an `error` message (the socket stays open). */
export function checkOperation(
  payload: SubscribePayload,
  o: OperationCheckOptions,
  rules: readonly ValidationRule[] = [...specifiedRules, ...o.limits.validationRules],
): CheckedOperation | GraphQLError[] {
  let query = payload.query;
  if (o.trusted) {
    try {
      // graphql-ws requires a `query` string: an empty one with `extensions.persistedQuery` names a listed document.
      const screened = screenOperation(
        {
          query: payload.query === '' ? undefined : payload.query,
          operationName: payload.operationName,
          variables: payload.variables,
          extensions: payload.extensions,
        },
        o.trusted,
      );
      query = typeof screened.query === 'string' ? screened.query : query;
    } catch (err) {
      if (!(err instanceof EdgeError)) throw err;
      return [new GraphQLError(err.message, { extensions: { code: err.code, ...err.extensions } })];
    }
  }
  const known = o.documents?.get(query);
  let document: DocumentNode;
  try {
    document = known?.document ?? parse(query, o.limits.parseOptions);
  } catch (err) {
    if (!(err instanceof GraphQLError)) throw err;
    // formatError finds the token limit behind a parse error through `originalError`.
    return [
      new GraphQLError(err.message, {
        source: err.source,
        positions: err.positions,
        originalError: err,
        extensions: { code: 'GRAPHQL_PARSE_FAILED' },
      }),
    ];
  }
  const operationName = payload.operationName ?? undefined;
  // The kind first: a query or mutation is told where to go, whatever else is wrong with it.
  const selected = getOperationAST(document, operationName);
  if (selected && selected.operation !== OperationTypeNode.SUBSCRIPTION) {
    const err = new NotSupportedOverWebSocketError(selected.operation);
    return [new GraphQLError(err.message, { nodes: selected, originalError: err })];
  }
  if (!known) {
    const invalid = validate(o.schema, document, rules);
    if (invalid.length > 0) return invalid.map((e) => (e.originalError ? e : coded(e, 'GRAPHQL_VALIDATION_FAILED')));
    o.documents?.set(query, document);
  }
  const op = selected;
  if (!op)
    return [
      new GraphQLError(
        operationName
          ? `the document has no operation named ${JSON.stringify(operationName.slice(0, 100))}`
          : 'the document has several operations: name one with operationName',
        { extensions: { code: 'BAD_USER_INPUT' } },
      ),
    ];
  const variableValues = payload.variables ?? undefined;
  const coerced = getVariableValues(o.schema, op.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 50 });
  if (coerced.errors) return coerced.errors.map((e) => coded(e, 'BAD_USER_INPUT'));
  const tooExpensive = o.limits.executionGuards.beforeExecute({
    schema: o.schema,
    document,
    operationName,
    variableValues,
  });
  if (tooExpensive) return [tooExpensive];
  return { document, query: known?.query ?? query, operationName, variableValues };
}
