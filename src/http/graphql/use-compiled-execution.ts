import {
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { keepJsonText } from '../fixed-operation.js';

/**
 * /graphql on the compiled-execution path the REST routes use: graphql-jit turns an
 * operation into one function, instead of graphql-js walking the document for every field of every
 * request. yoga's parse and validation caches hand back the same DocumentNode for the same query
 * text, so what is compiled is kept per document (a WeakMap: it goes when yoga's LRU drops it).
 *
 * - Compiling costs more than one generic execution, so a document is compiled the second time it
 *   runs: a client sending a new query every time (a hostile one, or one that inlines its ids)
 *   costs what it did; the queries apps repeat, with variables, run compiled.
 * - Variables are checked by graphql-js first, so a bad variable gets the same error either way
 *   (graphql-jit's own are masked as unexpected).
 * - A document graphql-jit cannot compile keeps running on graphql-js.
 * - Stored event JSON (`json`) stays JsonText in the result: the direct path writes it from its
 *   bytes (stringifyKeepingJsonText); JSON.stringify elsewhere reads it through toJSON.
 * - graphql-jit's errors have a path but no locations: they are added back from the document, so
 *   an error reads the same on the first run and the next.
 */
export function useCompiledExecution(): Plugin {
  const seen = new WeakSet<DocumentNode>();
  return {
    onExecute({ args, setExecuteFn }) {
      if (!seen.has(args.document)) {
        seen.add(args.document);
        return;
      }
      const operation = getOperationAST(args.document, args.operationName);
      const query = operation && compiledFor(args.schema, args.document, args.operationName);
      if (!operation || !query) return;
      setExecuteFn((run) => executeCompiled(query, operation, run));
    },
  };
}

/**
 * Compiled operations by document (yoga's parse cache hands back the same DocumentNode for the same
 * text, and a WeakMap lets them go with it), shared by this plugin and prepared operations, so a
 * document is compiled once whichever path runs it. Null: graphql-jit cannot compile it.
 */
const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

/** The operation compiled by graphql-jit (stored JSON text kept as it is), once per document and name. */
export function compiledFor(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): CompiledQuery | null {
  let byOperation = compiled.get(document);
  if (!byOperation) {
    byOperation = new Map();
    compiled.set(document, byOperation);
  }
  const key = operationName ?? '';
  let query = byOperation.get(key);
  if (query === undefined) {
    const result = compileQuery(schema, document, operationName ?? undefined, { customSerializers: { String: keepJsonText } });
    query = isCompiledQuery(result) ? result : null;
    byOperation.set(key, query);
  }
  return query;
}

/** One run of a compiled operation: variables checked by graphql-js first, error locations restored. */
export async function executeCompiled(
  query: CompiledQuery,
  operation: OperationDefinitionNode,
  run: { schema: GraphQLSchema; document: DocumentNode; contextValue?: unknown; rootValue?: unknown; variableValues?: Readonly<Record<string, unknown>> | null },
): Promise<ExecutionResult> {
  const variables = getVariableValues(run.schema, operation.variableDefinitions ?? [], run.variableValues ?? {}, { maxErrors: 25 });
  if (variables.errors) return { errors: variables.errors };
  const result = await query.query(run.rootValue, run.contextValue, run.variableValues ?? {});
  return result.errors ? { ...result, errors: result.errors.map((error) => withLocations(error, run.document, operation)) } : result;
}

/** The error with the node of the field its path names (graphql-js gives it; graphql-jit does not). */
function withLocations(error: GraphQLError, document: DocumentNode, operation: OperationDefinitionNode): GraphQLError {
  if ((error.nodes && error.nodes.length > 0) || !error.path) return error;
  const field = fieldAt(document, operation.selectionSet, error.path.filter((segment): segment is string => typeof segment === 'string'));
  if (!field) return error;
  return new GraphQLError(error.message, { nodes: [field], path: error.path, extensions: error.extensions, originalError: error.originalError });
}

/** The field node a response path leads to, through inline fragments and fragment spreads. */
function fieldAt(document: DocumentNode, selectionSet: SelectionSetNode | undefined, path: readonly string[]): FieldNode | undefined {
  const [key, ...rest] = path;
  if (!selectionSet || key === undefined) return undefined;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if ((selection.alias ?? selection.name).value !== key) continue;
      return rest.length === 0 ? selection : fieldAt(document, selection.selectionSet, rest);
    }
    const nested =
      selection.kind === Kind.INLINE_FRAGMENT
        ? selection.selectionSet
        : document.definitions.find(
            (definition): definition is FragmentDefinitionNode =>
              definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value,
          )?.selectionSet;
    const found = fieldAt(document, nested, path);
    if (found) return found;
  }
  return undefined;
}
