/**
 * The validation rules of the operation limits: GraphQL Armor's depth, alias and directive
 * rules, plus introspection's own limit. They are plain graphql-js ValidationRules, so any
 * transport that validates with them (Apollo, graphql-ws, a compiled executor) applies them.
 * Armor's rules are told not to throw (a throwing rule aborts validate()) and report a typed
 * error instead, so clients see MAX_DEPTH_LIMIT and the like, not a generic validation code.
 */
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import type { ValidationContext, ValidationRule } from 'graphql';
import { ErrorCode } from '../../adapters/contract/errors';
import type { LimitsConfig } from './config';
import { limitGraphQLError, OperationLimitError } from './errors';
import { introspectionRule } from './introspection';

type Reject = (ctx: ValidationContext | null) => void;

/** Armor's callback options: report one typed error, do not throw. */
function refuse(
  code: ErrorCode,
  limit: 'maxDepth' | 'maxAliases' | 'maxDirectives',
  max: number,
  what: string,
  env: string,
): { propagateOnRejection: false; onReject: Reject[] } {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx) =>
        ctx?.reportError(
          limitGraphQLError(new OperationLimitError(code, `${what} is over the limit of ${max} (${env})`, limit, max)),
        ),
    ],
  };
}

/** The validation rules for `limits`, to run beside graphql-js's specifiedRules. */
export function limitRules(c: LimitsConfig): ValidationRule[] {
  return [
    introspectionRule({
      enabled: c.introspection,
      maxFields: c.maxIntrospectionFields,
      maxDepth: c.maxIntrospectionDepth,
    }),
    // Depth counts fields: fragments add no level of resolution, so they add none here
    // (Armor's default would count `... on X` as a level). `__schema` is exempt (its own limit).
    maxDepthRule({
      n: c.maxDepth,
      ignoreIntrospection: true,
      flattenFragments: true,
      ...refuse(ErrorCode.MaxDepthLimit, 'maxDepth', c.maxDepth, "the operation's depth", 'MAX_DEPTH'),
    }),
    maxAliasesRule({
      n: c.maxAliases,
      ...refuse(ErrorCode.MaxAliasesLimit, 'maxAliases', c.maxAliases, 'the number of aliases', 'MAX_ALIASES'),
    }),
    maxDirectivesRule({
      n: c.maxDirectives,
      ...refuse(
        ErrorCode.MaxDirectivesLimit,
        'maxDirectives',
        c.maxDirectives,
        'the number of directives',
        'MAX_DIRECTIVES',
      ),
    }),
  ];
}
