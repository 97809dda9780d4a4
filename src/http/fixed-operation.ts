import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, type ExecutionResult, type GraphQLSchema, GraphQLString, validate } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { GraphQLContext } from '../schema/context.js';
import { JsonText } from '../store/json-text.js';

/**
 * Strings as GraphQL serialises them, except stored JSON text, which stays bytes for the response
 * (graphql-jit's `customSerializers`; also used by /graphql's compiled execution).
 */
export const keepJsonText = (value: unknown) => (value instanceof JsonText ? value : GraphQLString.serialize(value));

export type FixedOperation<TResult, TVariables> = (
  variables: TVariables,
  context: GraphQLContext,
) => Promise<ExecutionResult<TResult>>;

/**
 * A fixed GraphQL operation run in-process against the schema. The document arrives pre-parsed from
 * GraphQL Code Generator (src/generated), is validated once, here, at start, and compiled by
 * graphql-jit into one function, so a request pays only for running the resolvers: graphql-js'
 * generic executor, which walks the document for every field of every request, cost the /event
 * route about half its throughput (BENCHMARKS.md). Stored event JSON comes out as JsonText, its bytes
 * as the store returned them, for the route to write as they are.
 */
export function prepareFixedOperation<TResult, TVariables extends Record<string, unknown>>(
  schema: GraphQLSchema,
  document: TypedDocumentNode<TResult, TVariables>,
): FixedOperation<TResult, TVariables> {
  const errors = validate(schema, document);
  if (errors.length > 0) {
    throw new Error(`fixed operation does not match the schema: ${errors.map((e) => e.message).join('; ')}`);
  }
  const compiled = compileQuery(schema, document as DocumentNode, undefined, {
    customSerializers: { String: keepJsonText },
  });
  if (!isCompiledQuery(compiled)) {
    const reasons = (compiled as ExecutionResult).errors?.map((e) => e.message).join('; ');
    throw new Error(`fixed operation could not be compiled: ${reasons}`);
  }
  return async (variables, context) => (await compiled.query(undefined, context, variables)) as ExecutionResult<TResult>;
}
