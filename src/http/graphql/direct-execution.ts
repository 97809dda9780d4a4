import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import { LookupError } from '../../errors.js';
import { metrics } from '../../metrics/metrics.js';
import type { AnswerCache } from '../../store/answer-cache.js';
import { type QuotedJson, quoteKeepingJsonText, writeQuotedJson } from '../../store/json-text.js';
import { type CountedLookup, ReadReceipt } from '../../store/read-receipt.js';
import type { Logger } from '../../logger.js';
import type { FailureLog } from '../failure-log.js';
import type { GraphQLContext } from '../../schema/context.js';
import type { LookupYoga } from './create-yoga.js';
import type { PreparedOperations } from './prepared-operations.js';
import { tagResultErrors } from './use-error-codes.js';
import { logResultErrors } from './use-log-server-errors.js';
import { namesSecretKey, redactResult } from './use-redact-secret-keys.js';
import { containsSecretKey } from '../../nostr/secret-keys.js';

/**
 * The common GraphQL request, `POST /graphql` with a JSON object body, run on yoga's envelop
 * pipeline directly: the same parse, validation and execution, with every envelop
 * plugin (graphql-armor, the parse and validation caches, cost and size limits, compiled
 * execution, error masking), and the same result handling as yoga's own hooks (the functions of
 * use-error-codes, use-redact-secret-keys and use-log-server-errors), but without yoga's Fetch API
 * layer: building a WHATWG Request and Response and their streams around a ~1 KB answer cost
 * more than the lookup (about 500 µs a request, most of /graphql's time, BENCHMARKS.md).
 *
 * Anything else (GET, other media types, an array, unknown parameters, a body that is not JSON)
 * is left to yoga, which answers it as it always did: `answer` returns false.
 */

/** The parameters a GraphQL-over-HTTP request body may have; any other key goes to yoga (which refuses it). */
const PARAMETERS = new Set(['query', 'variables', 'operationName', 'extensions']);

interface Params {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

export interface DirectGraphql {
  /** Answers the request and returns true, or returns false for yoga to answer it. */
  answer(request: FastifyRequest, reply: FastifyReply, body: Buffer): Promise<boolean>;
}

export interface DirectGraphqlOptions {
  yoga: LookupYoga;
  logger: Logger;
  logFailure: FailureLog;
  /** The queries apps repeat, run without the envelop pipeline (prepared-operations.ts). */
  prepared: PreparedOperations;
  createContext(client: string, reads?: ReadReceipt): GraphQLContext;
  /** Answers of prepared operations kept while what they were made of holds (store/answer-cache.ts); absent: every one runs. */
  answers?: AnswerCache<KeptGraphqlAnswer>;
}

/**
 * A prepared operation's answer, kept: its body and the lookups it stands for. The body's stored
 * JSON texts are the hot cache's values (json-text.ts QuotedJson), escaped again each time it is
 * sent: kept as a copy, an event with ten profiles (11 KB) asked in turn over 10,000 events crowded
 * out the values themselves (the Redis commands of the REST /event beside it went from 0 to 0.81 a
 * lookup: BENCHMARKS.md), so only answers of 4 KB or less were kept, and /event's never.
 */
export interface KeptGraphqlAnswer {
  body: QuotedJson;
  lookups: readonly CountedLookup[];
}

/** The longest body an answer is kept under (its key): a longer one is run each time. */
export const MAX_KEPT_KEY_LENGTH = 4096;
/** The most text of its own (beside its stored JSON texts) a kept answer holds. */
const MAX_KEPT_OWN_CHARACTERS = 4096;

export function createDirectGraphql({ yoga, logger, logFailure, prepared, createContext, answers }: DirectGraphqlOptions): DirectGraphql {
  return {
    async answer(request, reply, body) {
      const mediaType = responseMediaType(request.headers.accept);
      if (!mediaType || !isJsonContentType(request.headers['content-type'])) return false;
      const sendBody = (status: number, body: Buffer) => reply.status(status).header('content-type', `${mediaType}; charset=utf-8`).send(body);
      // Kept under the body's own bytes (latin1: one character a byte, so distinct bodies are
      // distinct keys): the same bytes parse and pass the checks below alike, and a kept answer is
      // the one the operation makes again, so it is found without parsing anything. The media
      // type is not in the key: a kept answer is an error-free 200, the same bytes under either.
      // (Spellings of one request are kept apart, as different variables are: each bounded by
      // HOT_CACHE_MB like any answer.)
      const key = answers && body.length <= MAX_KEPT_KEY_LENGTH ? body.toString('latin1') : undefined;
      const kept = key === undefined ? undefined : answers?.get(key);
      if (kept) {
        metrics.lookupsAgain(kept.lookups);
        await sendBody(200, writeQuotedJson(kept.body));
        return true;
      }
      const params = readParams(body);
      if (!params) return false;
      const send = (result: ExecutionResult) => {
        tagResultErrors(result);
        const safe = redactResult(result);
        return sendBody('data' in safe ? 200 : 400, stringifyResult(safe));
      };
      // As yoga's onParams hook (use-redact-secret-keys): refused whole, before anything else.
      if (namesSecretKey(params)) {
        await send({ errors: [new LookupError('secret_key_refused')] });
        return true;
      }
      const operation = prepared.get(params.query, params.operationName);
      if (operation) {
        // Kept the second time it is made (answer-cache.ts): ever new variables fill nothing.
        const reads = key !== undefined ? new ReadReceipt() : undefined;
        const result = await prepared.run(operation, createContext(request.ip, reads), params.variables);
        logResultErrors(logger, logFailure, result.errors);
        if (key === undefined || reads === undefined || result.errors) {
          await send(result);
          return true;
        }
        // A whole answer without errors is kept (redacted as sent: the same bytes again), unless
        // its key would hold a secret key: the check above reads the parsed query, and the body may
        // carry one beside it (an unused variable, a repeated member JSON.parse drops).
        const answer = quoteResult(redactResult(result));
        const own = ownCharacters(answer);
        if (own <= MAX_KEPT_OWN_CHARACTERS && !containsSecretKey(key)) {
          answers?.keep(key, { body: keptCopy(answer), lookups: reads.lookups }, reads, 200 + 2 * key.length + 2 * own + 48 * (answer.texts.length + reads.lookups.length));
        }
        await sendBody(200, writeQuotedJson(answer));
        return true;
      }
      const { parse, validate, contextFactory, execute, schema } = yoga.getEnveloped({ req: request, reply, params } as never);
      let document: DocumentNode;
      try {
        document = parse(params.query);
      } catch (error) {
        const refusal = asGraphQLError(error);
        // A syntax error (graphql-armor's token limit comes tagged already).
        const extensions = refusal.extensions as Record<string, unknown>;
        extensions.code ??= 'graphql_parse_failed';
        await send({ errors: [refusal] });
        return true;
      }
      // As yoga checks right after parsing (before validation): the operation to run must be there.
      if (!getOperationAST(document, params.operationName)) {
        await send({ errors: [new GraphQLError('Could not determine what operation to execute.')] });
        return true;
      }
      let errors: readonly GraphQLError[];
      try {
        errors = validate(schema, document);
      } catch (error) {
        // graphql-armor throws its refusals from inside validation rules.
        errors = [asGraphQLError(error)];
      }
      if (errors.length > 0) {
        await send({ errors });
        return true;
      }
      prepared.validated(params.query, params.operationName, document);
      const contextValue = await contextFactory();
      const result = (await execute({
        schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      })) as ExecutionResult;
      logResultErrors(logger, logFailure, result.errors);
      await send(result);
      return true;
    },
  };
}

/** What the client accepts, as yoga reads it: the first of its types we can send, or undefined (yoga answers). */
export function responseMediaType(accept: string | undefined): string | undefined {
  if (accept === undefined || accept.trim() === '') return 'application/json';
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]?.trim().toLowerCase();
    if (type === 'application/graphql-response+json') return type;
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return 'application/json';
  }
  return undefined;
}

export function isJsonContentType(contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}

/** The body as GraphQL parameters, or undefined if it is anything yoga would treat differently. */
function readParams(body: Buffer): Params | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const object = parsed as Record<string, unknown>;
  if (Object.keys(object).some((key) => !PARAMETERS.has(key))) return undefined;
  const { query, variables, operationName, extensions } = object;
  if (typeof query !== 'string') return undefined;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  // Extensions (persisted queries and the like) are yoga's business.
  if (extensions != null) return undefined;
  return {
    query,
    ...(variables != null ? { variables: variables as Record<string, unknown> } : {}),
    ...(operationName != null ? { operationName } : {}),
  };
}

/** The characters a body holds beside its stored texts (the texts are the hot cache's). */
function ownCharacters({ between }: QuotedJson): number {
  let characters = 0;
  for (const text of between) characters += text.length;
  return characters;
}

/**
 * What a kept answer holds: its texts as fresh JsonTexts over the same bytes (one a resolver read
 * holds its decoded string too, a copy outside HOT_CACHE_MB), and its own text flattened (a slice
 * keeps the whole string it was cut from). The round trip through UTF-8 is exact: JSON.stringify
 * writes a lone surrogate as an escape, so its output has none.
 */
function keptCopy({ between, texts }: QuotedJson): QuotedJson {
  return { between: between.map((text) => Buffer.from(text).toString()), texts: texts.map((text) => text.fresh()) };
}

function asGraphQLError(error: unknown): GraphQLError {
  return error instanceof GraphQLError ? error : new GraphQLError('Unexpected error.', { originalError: error as Error });
}

/**
 * The result as yoga writes it: errors without their internal `http` extension, `data` as it is,
 * with stored event JSON written from its bytes.
 */
function stringifyResult(result: ExecutionResult): Buffer {
  return writeQuotedJson(quoteResult(result));
}

/** stringifyResult in pieces (json-text.ts QuotedJson). */
function quoteResult(result: ExecutionResult): QuotedJson {
  const errors = result.errors?.map((error) => {
    const json: Record<string, unknown> = { ...error.toJSON() };
    if (!json.extensions || !('http' in (json.extensions as object))) return json;
    const extensions: Record<string, unknown> = { ...(json.extensions as object) };
    delete extensions.http;
    if (Object.keys(extensions).length > 0) json.extensions = extensions;
    else delete json.extensions;
    return json;
  });
  return quoteKeepingJsonText(errors ? { errors, ...('data' in result ? { data: result.data } : {}) } : { data: result.data });
}
