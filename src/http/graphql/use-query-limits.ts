import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphqlConfig, LookupConfig } from '../../config/env.js';
import { LookupError } from '../../errors.js';
import type { GraphQLContext } from '../../schema/context.js';
import { operationCost } from '../../schema/query-cost.js';

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
 * The JSON size of a result's data, in bytes, never less than what will be sent (escapes and UTF-8
 * counted), stopping as soon as it passes `limit`: the walk never costs more than the answer it spares.
 */
export function approximateJsonBytes(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') total += jsonStringBytes(item) + 1;
    else if (item === null || typeof item !== 'object') total += String(item).length + 1;
    else if (Array.isArray(item)) {
      total += 2 + item.length;
      for (const element of item) stack.push(element);
    } else {
      total += 2;
      for (const [key, element] of Object.entries(item)) {
        total += key.length + 4;
        stack.push(element);
      }
    }
  }
  return total;
}

/**
 * What one GraphQL request may cost us, bounded twice: before execution by the cost model
 * (schema/query-cost.ts: objects multiplied through lists), and after it, before anything is
 * serialised, by the size of the answer (MAX_RESPONSE_BYTES). Resolved values share the stored
 * strings, so an oversized answer costs little memory until it is serialised; it never is.
 */
export function useQueryLimits({ limits, config }: QueryLimitOptions): Plugin<GraphQLContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cost = operationCost(args.schema, args.document, args.operationName, args.variableValues, limits);
      if (cost > config.maxCost) {
        setResultAndStopExecution({
          errors: [
            new LookupError('query_too_costly', {
              message: `The query may return about ${cost} objects (lists multiplied through, relevantProfiles by ${limits.maxProfiles}); the limit is ${config.maxCost}. Ask for fewer ids or nest less.`,
            }),
          ],
        });
        return undefined;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const { data } = result as ExecutionResult;
          if (approximateJsonBytes(data, config.maxResponseBytes) > config.maxResponseBytes) {
            setResult({ data: null, errors: [new LookupError('response_too_large')] });
          }
        },
      };
    },
  };
}
