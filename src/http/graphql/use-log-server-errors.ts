import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERRORS, errorCodeOf, rootCause } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { FailureLog } from '../failure-log.js';

/**
 * Whether a GraphQL error is the server's fault: a table code with a 5xx status, or no code and an
 * unexpected exception behind it. Syntax, validation and coercion errors are GraphQLErrors all the
 * way down: the client's mistake, logged at info, never at error.
 */
export function isServerFault(error: GraphQLError): boolean {
  const code = errorCodeOf(error);
  if (code !== undefined) return ERRORS[code].status >= 500;
  return !(rootCause(error) instanceof GraphQLError);
}

/**
 * Logs every GraphQL error that is the server's fault with its cause (at most once a second per
 * code, failure-log.ts), since the client sees only the table message or a masked one; client
 * errors are logged at debug.
 */
export function useLogServerErrors(logger: Logger, logFailure: FailureLog): Plugin {
  return {
    onExecutionResult({ result }) {
      for (const { errors } of Array.isArray(result) ? result : [result]) logResultErrors(logger, logFailure, errors);
    },
  };
}

/** Logs the errors of one result as above (also used by the direct path, direct-execution.ts). */
export function logResultErrors(logger: Logger, logFailure: FailureLog, errors: readonly GraphQLError[] | undefined): void {
  for (const error of errors ?? []) {
    if (isServerFault(error)) {
      logFailure(logger, error, 'graphql error');
    } else {
      logger.debug({ code: errorCodeOf(error) ?? error.extensions?.code, message: error.message }, 'graphql client error');
    }
  }
}
