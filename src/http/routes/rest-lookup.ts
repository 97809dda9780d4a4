import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { type ErrorCode, LookupError } from '../../errors.js';
import { metrics } from '../../metrics/metrics.js';
import type { GraphQLContext } from '../../schema/context.js';
import type { AnswerCache } from '../../store/answer-cache.js';
import { type CountedLookup, ReadReceipt } from '../../store/read-receipt.js';
import { prepareFixedOperation } from '../fixed-operation.js';
import { singleQueryParameter } from '../query-parameter.js';
import { type Rendered, renderedResponse, type RestResponse, toRestResponse } from '../rest-response.js';

/** A REST lookup route: one query parameter, one fixed operation, one JSON shape. */
export interface RestLookup<TResult, TVariables extends Record<string, unknown>> {
  path: string;
  parameter: string;
  document: TypedDocumentNode<TResult, TVariables>;
  variables(parameterValue: string): TVariables;
  /** The success body (JSON parts) and its validators, or null when nothing was found. */
  render(data: TResult, limits: RenderLimits): Rendered | null;
  notFound: ErrorCode;
  /** The answer when what was asked was deleted by its author (NIP-09) or vanished (NIP-62). */
  deleted: ErrorCode;
}

export interface RenderLimits {
  /** MAX_RESPONSE_BYTES: what a body may add to the thing asked (/event: the profiles map). */
  maxResponseBytes: number;
}

/** A 200 kept by the answer cache: its body's parts and validators, and the lookups it stands for. */
export interface KeptAnswer {
  rendered: Rendered;
  lookups: readonly CountedLookup[];
}

/** Answers a query; `newContext` makes the request's context (given its receipt, where the answer may be kept). */
export type RestHandler = (query: unknown, newContext: (reads?: ReadReceipt) => GraphQLContext) => Promise<RestResponse>;

/**
 * A REST lookup: its fixed operation run, and the outcome turned into a status and body
 * (rest-response.ts). With `answers` (the hot cache on), a 200 made only of what the hot cache held
 * is kept, and served again while all of it still holds (store/answer-cache.ts): the same bytes and
 * validators, without running the operation.
 */
export function restLookupHandler<TResult, TVariables extends Record<string, unknown>>(
  schema: GraphQLSchema,
  lookup: RestLookup<TResult, TVariables>,
  limits: RenderLimits,
  answers?: AnswerCache<KeptAnswer>,
): RestHandler {
  const render = (data: TResult) => lookup.render(data, limits);
  const run = prepareFixedOperation(schema, lookup.document);
  return async (query, newContext) => {
    let outcome: ExecutionResult<TResult> | LookupError;
    let context: GraphQLContext | undefined;
    let key: string | undefined;
    try {
      const parameter = singleQueryParameter(query, lookup.parameter);
      if (answers) {
        key = `${lookup.path}?${parameter}`;
        const kept = answers.get(key);
        if (kept) {
          metrics.lookupsAgain(kept.lookups);
          return renderedResponse(kept.rendered);
        }
      }
      context = newContext(answers ? new ReadReceipt() : undefined);
      outcome = await run(lookup.variables(parameter), context);
    } catch (error) {
      if (!(error instanceof LookupError)) throw error;
      outcome = error;
    }
    const response = toRestResponse(outcome, render, context && context.deleted.size > 0 ? lookup.deleted : lookup.notFound);
    const { rendered } = response;
    if (answers && key !== undefined && rendered && context?.reads && keepable(rendered)) {
      answers.keep(key, { rendered, lookups: context.reads.lookups }, context.reads, keptBytes(key, rendered, context.reads));
    }
    return response;
  };
}

/**
 * Not a body whose Last-Modified was held back to now (a created_at in the future, or this very
 * second): made again later, it would say a later time.
 */
function keepable({ validators }: Rendered): boolean {
  return validators.lastModified === undefined || validators.lastModified < Math.floor(Date.now() / 1000);
}

/** An estimate of what a kept answer holds besides the entries' bytes: its key, tag, parts and counts. */
function keptBytes(key: string, { parts, validators }: Rendered, reads: ReadReceipt): number {
  return 200 + 2 * (key.length + validators.etag.length) + 16 * parts.length + 48 * reads.lookups.length;
}
