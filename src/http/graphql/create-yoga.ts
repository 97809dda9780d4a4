import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { GraphqlConfig, LookupConfig } from '../../config/env.js';
import type { Logger } from '../../logger.js';
import type { FailureLog } from '../failure-log.js';
import { GRAPHIQL_EXAMPLE_QUERY, GRAPHIQL_TITLE, renderOfflineGraphiQL } from './graphiql.js';
import type { GraphQLContext } from '../../schema/context.js';
import { boundedParserCache } from './document-caches.js';
import { useCompiledExecution } from './use-compiled-execution.js';
import { armorRejection, useErrorCodes } from './use-error-codes.js';
import { useLogServerErrors } from './use-log-server-errors.js';
import { useQueryLimits } from './use-query-limits.js';
import { useRequestParseErrors } from './use-request-parse-errors.js';
import { useRedactSecretKeys } from './use-redact-secret-keys.js';

export interface YogaOptions {
  schema: GraphQLSchema;
  config: GraphqlConfig;
  limits: LookupConfig;
  logger: Logger;
  /** Logs server failures, at most once a second per code (failure-log.ts). */
  logFailure: FailureLog;
  createContext(client: string): GraphQLContext;
}

/** Where GraphQL is served (the fast lane looks there too: fast-lane.ts). */
export const GRAPHQL_ENDPOINT = '/graphql';

export type LookupYoga = YogaServerInstance<{ req: FastifyRequest; reply: FastifyReply }, GraphQLContext>;

type Level = 'debug' | 'info' | 'warn' | 'error';

/** yoga logs `(message)` or `(error)` or several values: each becomes one pino line with a message. */
function yogaLogger(logger: Logger): Record<Level, (...args: unknown[]) => void> {
  const at =
    (level: Level) =>
    (...args: unknown[]) => {
      const error = args.find((arg): arg is Error => arg instanceof Error);
      const words = args.filter((arg) => arg !== error).map((arg) => (typeof arg === 'string' ? arg : safeJson(arg)));
      const message = words.join(' ') || error?.message || 'graphql-yoga';
      // A client that went away while yoga read its body is not the server's fault.
      if (error && isClientAbort(error)) logger.debug({ err: error }, message);
      else if (error) logger[level]({ err: error }, message);
      else logger[level](message);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function isClientAbort(error: Error & { code?: string }): boolean {
  return error.message === 'aborted' || error.code === 'ECONNRESET' || error.name === 'AbortError';
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * GraphQL over HTTP at /graphql (GET and POST). Unexpected errors are masked (yoga's default);
 * table errors (errors.ts) reach clients with `extensions.code`. graphql-armor bounds depth, aliases,
 * directives, tokens and cost, and hides field suggestions unless GraphiQL is on.
 */
export function createLookupYoga({ schema, config, limits, logger, logFailure, createContext }: YogaOptions): LookupYoga {
  return createYoga({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphiql: config.graphiql ? { title: GRAPHIQL_TITLE, defaultQuery: GRAPHIQL_EXAMPLE_QUERY } : false,
    renderGraphiQL: renderOfflineGraphiQL,
    landingPage: false,
    maskedErrors: true,
    // CORS is answered by the HTTP layer (graphql-route.ts): yoga's reflects any Origin with
    // credentials allowed, where this public read-only API wants `*` and no credentials.
    cors: false,
    logging: yogaLogger(logger),
    context: ({ req }) => createContext(req.ip),
    parserAndValidationCache: boundedParserCache(),
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: 8, onReject: [armorRejection('query_too_deep')] },
        maxAliases: { n: 15, onReject: [armorRejection('too_many_aliases')] },
        maxTokens: { n: 2000, onReject: [armorRejection('too_many_tokens')] },
        maxDirectives: { n: 50, onReject: [armorRejection('too_many_directives')] },
        // "Did you mean …?" helps whoever explores the schema: shown where GraphiQL is (development),
        // hidden in production, where they would map the schema for a stranger.
        blockFieldSuggestion: { enabled: !config.graphiql },
        // Cost is ours (use-query-limits.ts): armor's does not multiply by list sizes.
        costLimit: { enabled: false },
      }),
      useQueryLimits({ limits, config }),
      useRequestParseErrors(),
      useCompiledExecution(),
      useLogServerErrors(logger, logFailure),
      useRedactSecretKeys(),
      useErrorCodes(),
    ],
  });
}
