import { GraphQLError } from 'graphql';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LookupError } from '../../errors.js';
import { containsSecretKey, redactSecretKeys } from '../../nostr/secret-keys.js';

const carriesSecretKey = (error: GraphQLError) =>
  containsSecretKey(error.message) || (error.extensions && containsSecretKey(JSON.stringify(error.extensions)));

/** The same error with its message and extensions redacted: its code, path and locations stay. */
function redacted(error: GraphQLError): GraphQLError {
  if (!carriesSecretKey(error)) return error;
  const extensions = redactStrings(error.extensions ?? {}) as Record<string, unknown>;
  return new GraphQLError(redactSecretKeys(error.message), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions,
  });
}

/** Every string inside a JSON-like value redacted (redacting the JSON text could break its escapes). */
function redactStrings(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecretKeys(value);
  if (value === null || typeof value !== 'object' || depth > 10) return value;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactSecretKeys(key), redactStrings(item, depth + 1)]));
}

export function redactResult(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.some(carriesSecretKey)) return result;
  return { ...result, errors: result.errors.map(redacted) };
}

/** Whether a request's document or operation name names a secret key (refused whole). */
export function namesSecretKey(params: { query?: string | null; operationName?: string | null }): boolean {
  return containsSecretKey(`${params.query ?? ''} ${params.operationName ?? ''}`);
}

/**
 * GraphQL's own messages quote what the client sent (a syntax error names the unexpected token, a
 * coercion error the value of a variable): a secret key pasted by mistake must not come back
 * (DESIGN §1). Every error message of every result is redacted before it is sent.
 */
export function useRedactSecretKeys(): Plugin {
  return {
    // A document that names a secret key anywhere (an alias, an operation name, a literal) is
    // refused whole: GraphQL echoes aliases in its data, and a literal would be refused anyway.
    onParams({ params, setResult }) {
      if (namesSecretKey(params)) {
        setResult({ errors: [new LookupError('secret_key_refused')] });
      }
    },
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(redactResult));
      else if (!(Symbol.asyncIterator in result)) setResult(redactResult(result));
    },
  };
}
