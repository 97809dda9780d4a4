import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Validators } from './conditional.js';
import { ERRORS, type ErrorCode, errorBody, errorCodeOf, LookupError } from '../errors.js';
import { joinJson, type StringOutput } from '../store/json-text.js';

/** A REST answer: status and JSON (text, or bytes), plus the failure behind a 500 for the log (never the body). */
export interface RestResponse {
  status: number;
  body: string | Buffer;
  failure?: unknown;
  /** A 200's validators (ETag, Last-Modified), for conditional requests. */
  validators?: Validators;
  /** A 429's Retry-After, in seconds, when the limit says (rate_limited). */
  retryAfterSeconds?: number;
  /** A 200's body as made (joined from these: stored events as they are), for keeping it (answer-cache.ts). */
  rendered?: Rendered;
}

/** A success body, as the parts it is joined from, and its validators. */
export interface Rendered {
  parts: readonly StringOutput[];
  validators: Validators;
  /** The parts already joined, where the validators were made from the body (conditional.ts renderedBody). */
  body?: Buffer;
}

/** The 200 answer of a rendered body. */
export function renderedResponse(rendered: Rendered): RestResponse {
  return { status: 200, body: rendered.body ?? joinJson(rendered.parts), validators: rendered.validators, rendered };
}

/**
 * An error answer. A 5xx always carries the table's message, so nothing internal reaches the body;
 * a 4xx may carry the more precise message its error was raised with (never client input).
 */
export function errorResponse(code: ErrorCode, cause?: Error): RestResponse {
  const { status } = ERRORS[code];
  if (status >= 500) return { status, body: JSON.stringify(errorBody(code)), failure: cause };
  // A LookupError's retryAfter, also where execution wrapped it in a located GraphQLError.
  const retryAfter = cause instanceof GraphQLError ? cause.extensions.retryAfter : undefined;
  const retryAfterSeconds = typeof retryAfter === 'number' ? retryAfter : undefined;
  return { status, body: JSON.stringify(errorBody(code, cause?.message)), ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) };
}

/**
 * The one place that turns the outcome of a REST request into a status and a body:
 * - a LookupError raised before execution (a bad query parameter) → its table status;
 * - an execution error → the status of its table code; anything unknown → 500 internal_error;
 * - data that `render` finds empty → `notFound` (404: not found, or deleted by its author);
 * - otherwise 200 with what `render` made.
 */
export function toRestResponse<TData>(
  outcome: ExecutionResult<TData> | LookupError,
  render: (data: TData) => Rendered | null,
  notFound: ErrorCode,
): RestResponse {
  if (outcome instanceof LookupError) return errorResponse(outcome.code, outcome);
  const [firstError] = outcome.errors ?? [];
  if (firstError) return errorResponse(errorCodeOf(firstError) ?? 'internal_error', firstError);
  const rendered = outcome.data ? render(outcome.data) : null;
  return rendered === null ? errorResponse(notFound) : renderedResponse(rendered);
}
