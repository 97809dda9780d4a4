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
 * The JSON size of a result's data, approximately (strings by length, no escapes counted), stopping
 * as soon as it passes `limit`: the walk never costs more than the answer it spares.
 */
export function approximateJsonBytes(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') total += item.length + 3;
    else if (item === null || typeof item !== 'object') total += 8;
    else if (Array.isArray(item)) {
      total += 2 + item.length;
      for (const element of item) stack.push(element);
    } else {
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
