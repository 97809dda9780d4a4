import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { type ErrorCode, LookupError } from '../../errors.js';
import type { GraphQLContext } from '../../schema/context.js';
import { prepareFixedOperation } from '../fixed-operation.js';
import { singleQueryParameter } from '../query-parameter.js';
import { type Rendered, type RestResponse, toRestResponse } from '../rest-response.js';

/** A REST lookup route: one query parameter, one fixed operation, one JSON shape. */
export interface RestLookup<TResult, TVariables extends Record<string, unknown>> {
  path: string;
  parameter: string;
  document: TypedDocumentNode<TResult, TVariables>;
  variables(parameterValue: string): TVariables;
  /** The success body (JSON) and its validators, or null when nothing was found. */
  render(data: TResult, limits: RenderLimits): Rendered | null;
  notFound: ErrorCode;
  /** The answer when what was asked was deleted by its author (NIP-09) or vanished (NIP-62). */
  deleted: ErrorCode;
}

export interface RenderLimits {
  /** MAX_RESPONSE_BYTES: what a body may add to the thing asked (/event: the profiles map). */
  maxResponseBytes: number;
}

export type RestHandler = (query: unknown, context: GraphQLContext) => Promise<RestResponse>;

export function restLookupHandler<TResult, TVariables extends Record<string, unknown>>(
  schema: GraphQLSchema,
  lookup: RestLookup<TResult, TVariables>,
  limits: RenderLimits,
): RestHandler {
  const render = (data: TResult) => lookup.render(data, limits);
  const run = prepareFixedOperation(schema, lookup.document);
  return async (query, context) => {
    let outcome: ExecutionResult<TResult> | LookupError;
    try {
      outcome = await run(lookup.variables(singleQueryParameter(query, lookup.parameter)), context);
    } catch (error) {
      if (!(error instanceof LookupError)) throw error;
      outcome = error;
    }
    return toRestResponse(outcome, render, context.deleted.size > 0 ? lookup.deleted : lookup.notFound);
  };
}
