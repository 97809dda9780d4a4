import type { Plugin } from 'graphql-yoga';
import { ERRORS, errorCodeOf, rootCause } from '../../errors.js';
import type { Logger } from '../../logger.js';

/**
 * Logs every GraphQL error that is the server's fault (a 5xx code, or no code at all) with its cause,
 * since the client sees only the table message or a masked one.
 */
export function useLogServerErrors(logger: Logger): Plugin {
  return {
    onExecutionResult({ result }) {
      const results = Array.isArray(result) ? result : [result];
      for (const { errors } of results) {
        for (const error of errors ?? []) {
          const code = errorCodeOf(error);
          if (code === undefined || ERRORS[code].status >= 500) {
            logger.error({ err: rootCause(error), code, path: error.path }, 'graphql error');
          }
        }
      }
    },
  };
}
