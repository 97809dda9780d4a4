import { GraphQLError } from 'graphql';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { containsSecretKey, redactSecretKeys } from '../../nostr/secret-keys.js';

/** The same error with its message redacted: its code, path and locations stay. */
function redacted(error: GraphQLError): GraphQLError {
  if (!containsSecretKey(error.message)) return error;
  return new GraphQLError(redactSecretKeys(error.message), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: error.extensions,
  });
}

function redactResult(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.some((error) => containsSecretKey(error.message))) return result;
  return { ...result, errors: result.errors.map(redacted) };
}

/**
 * GraphQL's own messages quote what the client sent (a syntax error names the unexpected token, a
 * coercion error the value of a variable): a secret key pasted by mistake must not come back
 * (DESIGN §1). Every error message of every result is redacted before it is sent.
 */
export function useRedactSecretKeys(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(redactResult));
      else if (!(Symbol.asyncIterator in result)) setResult(redactResult(result));
    },
  };
}
