import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { GraphqlConfig } from '../../config/env.js';
import type { Logger } from '../../logger.js';
import type { GraphQLContext } from '../../schema/context.js';
import { useLogServerErrors } from './use-log-server-errors.js';

export interface YogaOptions {
  schema: GraphQLSchema;
  config: GraphqlConfig;
  logger: Logger;
  createContext(): GraphQLContext;
}

export type LookupYoga = YogaServerInstance<{ req: FastifyRequest; reply: FastifyReply }, GraphQLContext>;

/**
 * GraphQL over HTTP at /graphql (GET and POST). Unexpected errors are masked (yoga's default);
 * table errors (errors.ts) reach clients with `extensions.code`. graphql-armor bounds depth, aliases,
 * directives, tokens and cost, and hides field suggestions.
 */
export function createLookupYoga({ schema, config, logger, createContext }: YogaOptions): LookupYoga {
  return createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: config.graphiql ? { title: 'Nostr lookup' } : false,
    landingPage: false,
    maskedErrors: true,
    cors: { origin: '*', methods: ['GET', 'POST'] },
    logging: {
      debug: (...args) => logger.debug(args),
      info: (...args) => logger.info(args),
      warn: (...args) => logger.warn(args),
      error: (...args) => logger.error(args),
    },
    context: () => createContext(),
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: 8 },
        maxAliases: { n: 15 },
        maxTokens: { n: 2000 },
        costLimit: { maxCost: 5000 },
      }),
      useLogServerErrors(logger),
    ],
  });
}
