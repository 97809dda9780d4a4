import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { LookupConfig } from '../../config/env.js';
import { costRefusal } from '../graphql/use-query-limits.js';
import { type ErrorCode, LookupError } from '../../errors.js';
import { metrics } from '../../metrics/metrics.js';
import type { GraphQLContext } from '../../schema/context.js';
import type { AnswerCache } from '../../store/answer-cache.js';
import { JsonText } from '../../store/json-text.js';
import { type CountedLookup, ReadReceipt } from '../../store/read-receipt.js';
import { prepareFixedOperation } from '../fixed-operation.js';
import { optionalQueryParameter, singleQueryParameter } from '../query-parameter.js';
import { type Rendered, renderedResponse, type RestResponse, toRestResponse } from '../rest-response.js';

/** A query parameter of a REST route: read by its rule, described in the OpenAPI document. */
export interface QueryParameter {
  name: string;
  /** Required: missing or empty is 400 missing_parameter. Any parameter given twice is 400 repeated_parameter. */
  required: boolean;
  description: string;
  examples?: readonly string[];
}

/** The values of a route's parameters as given (an optional one left out: absent), by name. */
export type ParameterValues = Readonly<Record<string, string | undefined>>;

/**
 * A REST route (a lookup, or a screen a client draws): its query parameters, one fixed operation,
 * one JSON shape. Every route is this and nothing else, so each gets the same parameter rules, error
 * codes, statuses, ETag/304, rate limits and OpenAPI entry (rest-routes.ts).
 */
export interface RestLookup<TResult, TVariables extends Record<string, unknown>> {
  path: string;
  parameters: readonly QueryParameter[];
  document: TypedDocumentNode<TResult, TVariables>;
  /** The operation's variables; a value out of range throws its LookupError (400). */
  variables(values: ParameterValues): TVariables;
  /** The variables the operation's cost depends on (a page's size); absent: none, it is costed once. */
  sizedBy?: readonly (keyof TVariables & string)[];
  /**
   * What an answer may be kept under (answer-cache.ts): the one id or pubkey it names, however
   * spelled (hex in any case, note, nevent, npub, nprofile, `nostr:`), so that spellings share one
   * answer; undefined where it may not be kept (what cannot be parsed, a NIP-05 name, an naddr:
   * resolved or refreshed beside the store; a screen, made of many things).
   */
  answerKey(values: ParameterValues): string | undefined;
  /** The success body (JSON parts) and its validators, or null when nothing was found. */
  render(data: TResult, limits: RenderLimits): Rendered | null;
  notFound: ErrorCode;
  /** The answer when what was asked was deleted by its author (NIP-09) or vanished (NIP-62). */
  deleted: ErrorCode;
}

export interface RenderLimits {
  /** MAX_RESPONSE_BYTES: what a body may add to the thing asked (/event: the profiles map). */
  maxResponseBytes: number;
  /** GRAPHQL_MAX_COST and the limits the cost model reads: a route's operation is costed as /graphql's are. */
  maxCost?: number;
  lookup?: LookupConfig;
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
  // A route's operation is costed with its variables as /graphql's are (a screen's page size
  // multiplies what it reads), before it runs: once per value of the variables it depends on, so
  // a lookup by id pays nothing per request.
  const refusals = new Map<string, LookupError | undefined>();
  const refusal = (variables: TVariables) => {
    if (limits.maxCost === undefined || !limits.lookup) return undefined;
    const key = (lookup.sizedBy ?? []).map((name) => String(variables[name])).join(',');
    if (!refusals.has(key)) {
      const config = { maxCost: limits.maxCost, maxResponseBytes: limits.maxResponseBytes };
      refusals.set(key, costRefusal({ schema, document: lookup.document as DocumentNode, variableValues: variables }, { limits: limits.lookup, config }));
    }
    return refusals.get(key);
  };
  return async (query, newContext) => {
    let outcome: ExecutionResult<TResult> | LookupError;
    let context: GraphQLContext | undefined;
    let key: string | undefined;
    try {
      const values = parameterValues(query, lookup.parameters);
      key = answers && keptAnswerKey(lookup, values);
      if (answers && key !== undefined) {
        const kept = takeKept(answers, key);
        if (kept) return renderedResponse(kept.rendered);
      }
      context = newContext(key !== undefined ? new ReadReceipt() : undefined);
      const variables = lookup.variables(values);
      const tooCostly = refusal(variables);
      if (tooCostly) throw tooCostly;
      outcome = await run(variables, context);
    } catch (error) {
      if (!(error instanceof LookupError)) throw error;
      outcome = error;
    }
    const response = toRestResponse(outcome, render, context && context.deleted.size > 0 ? lookup.deleted : lookup.notFound);
    const { rendered } = response;
    // Not a body whose Last-Modified was held back to now (a created_at in the future): made again
    // later, it would say a later time.
    if (answers && key !== undefined && rendered && context?.reads && !rendered.validators.heldBack) {
      answers.keep(key, { rendered: keptRendered(rendered), lookups: context.reads.lookups }, context.reads, keptBytes(key, rendered, context.reads));
    }
    return response;
  };
}

/**
 * The body as kept: stored JSON by its bytes only (the hot cache's), not the text a resolver may
 * have decoded from them on the way (JsonText keeps it once made), which HOT_CACHE_MB does not count.
 */
function keptRendered({ parts, validators }: Rendered): Rendered {
  return { parts: parts.map((part) => (typeof part === 'string' ? part : new JsonText(part.bytes))), validators };
}

/** An estimate of what a kept answer holds besides the entries' bytes: its key, tag, parts (strings as UTF-16) and counts. */
function keptBytes(key: string, { parts, validators }: Rendered, reads: ReadReceipt): number {
  let bytes = 200 + 2 * (key.length + validators.etag.length) + 48 * reads.lookups.length;
  for (const part of parts) bytes += typeof part === 'string' ? 40 + 2 * part.length : 48;
  return bytes;
}

/** What of a route names its kept answers. */
export type KeptAnswerRoute = Pick<RestLookup<unknown, Record<string, unknown>>, 'path' | 'parameters' | 'answerKey'>;

/** The key an answer of `lookup` for these parameters is kept under; undefined where it may not be kept. */
function keptAnswerKey(lookup: KeptAnswerRoute, values: ParameterValues): string | undefined {
  const answerKey = lookup.answerKey(values);
  return answerKey === undefined ? undefined : `${lookup.path}?${answerKey}`;
}

/** The answer kept under `key`, if it still holds, counted as served (servedAgain). */
function takeKept(answers: AnswerCache<KeptAnswer>, key: string): KeptAnswer | undefined {
  const kept = answers.find(key);
  if (kept) servedAgain(answers, kept);
  return kept;
}

/** Counts a kept answer served (a REST or a GraphQL one): by the answer cache, and as the lookups it stands for (metrics). */
export function servedAgain<T extends { lookups: readonly CountedLookup[] }>(answers: AnswerCache<T>, kept: T): void {
  answers.served();
  metrics.lookupsAgain(kept.lookups);
}

/**
 * The kept answer of `lookup` for a parsed query string, if there is one (the fast lane's way in,
 * fast-lane.ts): what the route's handler would serve without running its operation, not yet
 * counted (servedAgain, once it is served). Undefined for anything else, a parameter that breaks
 * its rule included (the route then answers it).
 */
export function keptAnswerOf(lookup: KeptAnswerRoute, answers: AnswerCache<KeptAnswer>, query: unknown): KeptAnswer | undefined {
  let key: string | undefined;
  try {
    key = keptAnswerKey(lookup, parameterValues(query, lookup.parameters));
  } catch (error) {
    if (error instanceof LookupError) return undefined;
    throw error;
  }
  return key === undefined ? undefined : answers.find(key);
}

/** Each parameter's value, by its rule (required or not; never repeated): 400 on the first that breaks it. */
function parameterValues(query: unknown, parameters: readonly QueryParameter[]): ParameterValues {
  const values: Record<string, string | undefined> = {};
  for (const { name, required } of parameters) {
    values[name] = required ? singleQueryParameter(query, name) : optionalQueryParameter(query, name);
  }
  return values;
}

/** The value of a parameter the route declares required (parameterValues has read it). */
export function requiredValue(values: ParameterValues, name: string): string {
  return values[name] as string;
}

/** What `parse` returns, or undefined where it throws (the lookup itself then says why). */
export function parsedOrUndefined<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}
