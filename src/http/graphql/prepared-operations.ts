import { type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema, getOperationAST, type OperationDefinitionNode } from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import { maskError } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../logger.js';
import { documentBytes } from './document-caches.js';
import { compiledFor, executeCompiled } from './use-compiled-execution.js';
import { costRefusal, type QueryLimitOptions, withinResponseSize } from './use-query-limits.js';

/**
 * How many operations are kept prepared, what they may hold (document-caches.ts: a document and its
 * compiled code are about 520 bytes a token), and the longest query text that is (apps repeat a few
 * short ones).
 */
const MAX_PREPARED = 256;
export const PREPARED_BYTES = 16 * 2 ** 20;
const MAX_QUERY_LENGTH = 16 * 1024;
/** yoga's message for a masked error (createYoga's default). */
const MASKED_MESSAGE = 'Unexpected error.';

interface PreparedOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  operationName: string | undefined;
  query: CompiledQuery;
}

export interface PreparedOperationsOptions extends QueryLimitOptions {
  schema: GraphQLSchema;
  logger: Logger;
}

/**
 * The queries an app repeats, run without yoga's envelop pipeline. A query text that
 * has passed yoga's parse and validation twice (graphql-armor's limits included: they depend on the
 * document alone) is kept here, compiled; from then on a request with that text runs only what
 * depends on the request, each step the function yoga's plugins call:
 *   the cost model with these variables (costRefusal), the compiled operation with variables
 *   checked by graphql-js (executeCompiled), the response size (withinResponseSize), and yoga's
 *   error masking (maskError), in that order, as in the pipeline.
 * Error codes, redaction and logging are the direct path's, as for every answer it sends. The
 * differential test (test/graphql-direct.test.ts) sends every request through both ways.
 * What the pipeline spent around this (envelop's hooks, the parse and validation cache lookups,
 * the context merge) was a third of /graphql's CPU time for one profile.
 */
export class PreparedOperations {
  private readonly prepared = new LRUCache<string, PreparedOperation>({
    max: MAX_PREPARED,
    maxSize: PREPARED_BYTES,
    sizeCalculation: (prepared, key) => documentBytes(prepared.document, key),
  });
  /** Query texts validated once: prepared the second time, so a one-off query is never compiled. */
  private readonly validatedOnce = new Set<string>();

  constructor(private readonly options: PreparedOperationsOptions) {}

  /** What the kept operations are charged, in bytes (at most PREPARED_BYTES). */
  get heldBytes(): number {
    return this.prepared.calculatedSize;
  }

  get(query: string, operationName: string | undefined): PreparedOperation | undefined {
    return this.prepared.get(keyOf(query, operationName));
  }

  /** Called when yoga's pipeline parsed and validated `query` into `document` without error. */
  validated(query: string, operationName: string | undefined, document: DocumentNode): void {
    // An empty operation name is left to the pipeline (getOperationAST reads it as none; execution does not).
    if (query.length > MAX_QUERY_LENGTH || operationName === '') return;
    const key = keyOf(query, operationName);
    if (this.prepared.has(key)) return;
    if (!this.validatedOnce.has(key)) {
      remember(this.validatedOnce, key);
      return;
    }
    const operation = getOperationAST(document, operationName);
    if (!operation || operation.operation !== 'query') return;
    const compiled = compiledFor(this.options.schema, document, operationName);
    if (!compiled) return;
    this.validatedOnce.delete(key);
    this.prepared.set(key, { document, operation, operationName, query: compiled });
  }

  /** Runs a prepared operation as yoga's pipeline would. */
  async run(prepared: PreparedOperation, contextValue: unknown, variableValues: Record<string, unknown> | undefined): Promise<ExecutionResult> {
    const { schema } = this.options;
    const { document, operation, operationName } = prepared;
    const refusal = costRefusal({ schema, document, operationName, variableValues }, this.options);
    if (refusal) return { errors: [refusal] };
    const result = withinResponseSize(await executeCompiled(prepared.query, operation, { schema, document, contextValue, variableValues }), this.options);
    return result.errors ? { ...result, errors: result.errors.map((error) => this.masked(error)) } : result;
  }

  /** As yoga's maskedErrors: an unexpected error becomes "Unexpected error.", and the original is logged. */
  private masked(error: GraphQLError): GraphQLError {
    const masked = maskError(error, MASKED_MESSAGE) as GraphQLError;
    if (masked !== error) this.options.logger.error({ err: error }, error.message);
    return masked;
  }
}

/** No operation name and an empty one are different requests (graphql-js looks for an operation named ""). */
const keyOf = (query: string, operationName: string | undefined) => `${operationName === undefined ? '-' : `+${operationName}`}\u0000${query}`;

/** Adds to a bounded set, forgetting the oldest entry when full. */
function remember(set: Set<string>, key: string): void {
  if (set.size >= MAX_PREPARED) set.delete(set.values().next().value as string);
  set.add(key);
}
