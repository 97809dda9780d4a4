import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, execute, type GraphQLSchema, validate } from 'graphql';
import type { GraphQLContext } from '../schema/context.js';

export type FixedOperation<TResult, TVariables> = (
  variables: TVariables,
  context: GraphQLContext,
) => Promise<ExecutionResult<TResult>>;

/**
 * A fixed GraphQL operation run in-process against the schema. The document arrives pre-parsed from
 * GraphQL Code Generator (src/generated) and is validated once, here, at start; a request pays only
 * for execution.
 */
export function prepareFixedOperation<TResult, TVariables extends Record<string, unknown>>(
  schema: GraphQLSchema,
  document: TypedDocumentNode<TResult, TVariables>,
): FixedOperation<TResult, TVariables> {
  const errors = validate(schema, document);
  if (errors.length > 0) {
    throw new Error(`fixed operation does not match the schema: ${errors.map((e) => e.message).join('; ')}`);
  }
  return async (variables, context) =>
    (await execute({
      schema,
      document,
      variableValues: variables,
      contextValue: context,
    })) as ExecutionResult<TResult>;
}
