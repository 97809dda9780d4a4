import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphqlConfig, LookupConfig } from '../../config/env.js';
import { errorCodeOf, LookupError } from '../../errors.js';
import type { GraphQLContext } from '../../schema/context.js';
import { JsonText } from '../../store/json-text.js';
import { NOTE_SEARCH_COST, operationCost, SEARCH_COST } from '../../schema/query-cost.js';

export interface QueryLimitOptions {
  limits: LookupConfig;
  config: Pick<GraphqlConfig, 'maxCost' | 'maxResponseBytes'>;
}

/**
 * The bytes JSON.stringify writes for a string, at most: UTF-8, and escapes (`\u0001` is six bytes,
 * `"` and `\` two). An upper bound: a lone surrogate counts three, as its escape would be six.
 */
function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    bytes += code < 0x20 ? 6 : code === 0x22 || code === 0x5c ? 2 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
  }
  return bytes;
}

/**
 * At most six bytes per UTF-16 unit (a control character's `\u0001`; UTF-8 needs at most three):
 * a bound read from the length alone, without looking at the characters.
 */
const roughStringBytes = (text: string) => 6 * text.length + 2;

/** Stored event JSON (a `json` field of a compiled execution) as the string it is sent as; a `raw` one as it is. */
const roughJsonTextBytes = (text: JsonText) => text.roughSentBytes();
const jsonTextBytes = (text: JsonText) => text.written().length;

/** The JSON size of `value` with each string measured by `stringBytes`, stopping once past `limit`. */
function walkJsonBytes(
  value: unknown,
  limit: number,
  stringBytes: (text: string) => number,
  textBytes: (text: JsonText) => number,
): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') total += stringBytes(item) + 1;
    else if (item instanceof JsonText) total += textBytes(item) + 1;
    else if (item === null || typeof item !== 'object') total += String(item).length + 1;
    else if (Array.isArray(item)) {
      total += 2 + item.length;
      for (const element of item) stack.push(element);
    } else {
      total += 2;
      // for…in: result objects are plain, and Object.entries would allocate a pair per field.
      for (const key in item) {
        total += key.length + 4;
        stack.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}

/**
 * The JSON size of a result's data, in bytes, never less than what will be sent (escapes and UTF-8
 * counted), stopping as soon as it passes `limit`: the walk never costs more than the answer it spares.
 * The common answer is far below the limit, and a bound from string lengths alone shows it: the
 * characters are looked at only when that bound passes the limit (reading every character of every
 * event's JSON was 13% of /graphql's CPU time at K = 10).
 */
export function approximateJsonBytes(value: unknown, limit: number): number {
  const rough = walkJsonBytes(value, limit, roughStringBytes, roughJsonTextBytes);
  return rough <= limit ? rough : walkJsonBytes(value, limit, jsonStringBytes, jsonTextBytes);
}

/** The operation as a request runs it: what the cost model reads. */
export interface OperationRequest {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Readonly<Record<string, unknown>> | null;
}

/** The refusal of an operation whose cost (schema/query-cost.ts) is over GRAPHQL_MAX_COST, or undefined. */
export function costRefusal(request: OperationRequest, { limits, config }: QueryLimitOptions): LookupError | undefined {
  const cost = operationCost(request.schema, request.document, request.operationName, request.variableValues, limits);
  if (cost <= config.maxCost) return undefined;
  return new LookupError('query_too_costly', {
    message: `The query may cost about ${cost} units of work (each field by what it reads, lists multiplied through: relevantProfiles by ${limits.maxProfiles}, pages by their first, each searchProfiles ${SEARCH_COST} and its first, each searchNotes ${NOTE_SEARCH_COST}); the limit is ${config.maxCost}. Ask for fewer ids, fewer fields, smaller pages or nest less.`,
  });
}

/** The result, or the response_too_large refusal that replaces it when its data is over MAX_RESPONSE_BYTES. */
export function withinResponseSize(result: ExecutionResult, { config }: Pick<QueryLimitOptions, 'config'>): ExecutionResult {
  // A resolver refused because the answer would be over the cap (ObjectBudget's byte bounds): the same refusal, whole.
  const refused = result.errors?.find((error) => errorCodeOf(error.originalError) === 'response_too_large');
  if (refused) return { data: null, errors: [refused.originalError as LookupError] };
  if (approximateJsonBytes(result.data, config.maxResponseBytes) <= config.maxResponseBytes) return result;
  return { data: null, errors: [new LookupError('response_too_large')] };
}

/**
 * What one GraphQL request may cost us, bounded twice: before execution by the cost model
 * (schema/query-cost.ts: objects multiplied through lists), and after it, before anything is
 * serialised, by the size of the answer (MAX_RESPONSE_BYTES). Resolved values share the stored
 * strings, so an oversized answer costs little memory until it is serialised; it never is.
 * (Prepared operations, prepared-operations.ts, apply the same two functions.)
 */
export function useQueryLimits(options: QueryLimitOptions): Plugin<GraphQLContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = costRefusal(args, options);
      if (refusal) {
        setResultAndStopExecution({ errors: [refusal] });
        return undefined;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const limited = withinResponseSize(result as ExecutionResult, options);
          if (limited !== result) setResult(limited);
        },
      };
    },
  };
}
