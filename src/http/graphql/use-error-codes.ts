import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERRORS, type ErrorCode } from '../../errors.js';

/**
 * Every GraphQL error leaves with a code from the one error table. Table errors carry
 * theirs already; what yoga and graphql-js raise is given one here, by what it is:
 * - a document that does not parse → graphql_parse_failed; one that does not validate (unknown
 *   field, bad variables) → graphql_validation_failed;
 * - an array body (batching) → batching_not_supported; any other malformed request →
 *   invalid_graphql_request;
 * - a field error that is not ours (masked "Unexpected error.") → internal_error.
 * graphql-armor's limits are tagged where they are raised (armorRejection below). Statuses: see
 * tagError, and docs/api.md ("GraphQL errors and statuses").
 */
export function useErrorCodes(): Plugin {
  return {
    onResultProcess({ result }) {
      for (const item of Array.isArray(result) ? result : [result]) {
        if ('errors' in item) tagResultErrors(item);
      }
    },
  };
}

/** Tags the errors of one result in place (also used by the direct path, direct-execution.ts). */
export function tagResultErrors(result: { errors?: readonly unknown[]; data?: unknown }): void {
  if (!Array.isArray(result.errors)) return;
  // A result without `data` is a request error: nothing was executed (GraphQL over HTTP).
  const executed = 'data' in result;
  for (const error of result.errors) tagError(error, executed);
}

const YOGA_CODES: Record<string, ErrorCode> = {
  GRAPHQL_PARSE_FAILED: 'graphql_parse_failed',
  GRAPHQL_VALIDATION_FAILED: 'graphql_validation_failed',
};

function tagError(error: unknown, executed: boolean): void {
  if (!(error instanceof GraphQLError)) return;
  const extensions = error.extensions as Record<string, unknown>;
  // A request error (nothing was executed) is 400 whatever the media type, as most GraphQL servers
  // answer it and GraphQL over HTTP requires for application/graphql-response+json; yoga alone
  // would answer some 200 and others 400. Errors of an executed request stay 200, next to `data`.
  // (yoga's `spec: true` is what makes it answer 200 to application/json: dropped.)
  if (!executed) {
    const http = { ...(extensions.http as Record<string, unknown> | undefined) };
    delete http.spec;
    extensions.http = { ...http, status: 400 };
  }
  const given = extensions.code;
  if (typeof given === 'string' && given in ERRORS) return;
  const code = codeOf(error, given);
  extensions.code = code;
  // yoga's words for this one do not say what to do instead.
  if (code === 'batching_not_supported') error.message = ERRORS.batching_not_supported.message;
}

function codeOf(error: GraphQLError, given: unknown): ErrorCode {
  if (typeof given === 'string' && given in YOGA_CODES) return YOGA_CODES[given] as ErrorCode;
  if (given === 'BAD_REQUEST') return /batching/i.test(error.message) ? 'batching_not_supported' : 'invalid_graphql_request';
  // A field error (it has a path) that is not a table error was masked: the server failed.
  if (error.path) return 'internal_error';
  // Anything else stops the request before execution: variables that do not coerce, say.
  return 'graphql_validation_failed';
}

/**
 * For graphql-armor's `onReject`: the error it is about to throw gets the table code, and loses the
 * misleading "Syntax Error: " armor puts before every limit (the document parsed fine).
 */
export function armorRejection(code: ErrorCode): (context: unknown, error: GraphQLError) => void {
  return (_context, error) => {
    (error.extensions as Record<string, unknown>).code = code;
    error.message = error.message.replace(/^Syntax Error: /, '');
  };
}
