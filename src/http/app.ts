import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { type Config, DEFAULT_HTTP_LIMITS, type HttpLimits, type MetricsConfig } from '../config/env.js';
import type { ErrorCode } from '../errors.js';
import type { ReadThrough } from '../fill/read-through.js';
import type { Nip05 } from '../nip05/nip05.js';
import type { Logger } from '../logger.js';
import { containsSecretKey } from '../nostr/secret-keys.js';
import { createContext, type GraphQLContext } from '../schema/context.js';
import { schema } from '../schema/index.js';
import type { EventStore } from '../store/event-store.js';
import {
  CONNECTIONS_CHECKING_INTERVAL_MS,
  closeConnectionsOnShutdown,
  limitConnections,
  limitRequestsPerConnection,
  rawErrorResponse,
  SOCKET_INACTIVITY_MS,
} from './connection-limits.js';
import { createLookupYoga } from './graphql/create-yoga.js';
import { createDirectGraphql } from './graphql/direct-execution.js';
import { registerGraphqlRoute } from './graphql/graphql-route.js';
import { PreparedOperations } from './graphql/prepared-operations.js';
import { createFailureLog, type FailureLog } from './failure-log.js';
import { notModified, validatorHeaders } from './conditional.js';
import { sendJson, sendNotModified } from './reply.js';
import { registerRequestLog } from './request-log.js';
import { errorResponse, type RestResponse } from './rest-response.js';
import { eventLookup } from './routes/event.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMetricsRoute, registerRequestMetrics } from './routes/metrics.js';
import { type RenderLimits, type RestLookup, restLookupHandler } from './routes/rest-lookup.js';
import { userProfileLookup } from './routes/user-profile.js';

export interface AppDependencies {
  store: EventStore;
  /** Fetch on miss from relays; without it the index alone answers (RELAYS empty). */
  fill?: ReadThrough;
  config: Pick<Config, 'lookup' | 'graphql'> & { http?: { limits: HttpLimits }; metrics?: MetricsConfig };
  logger: Logger;
  /** NIP-05 names as input and verification; without it, names answer nip05_unresolvable. */
  nip05?: Nip05;
}

const REST_ALLOW = 'GET, HEAD';
const REQUEST_ID = /^[\w.:-]{1,64}$/;

function send(reply: FastifyReply, { status, body }: RestResponse): FastifyReply {
  return sendJson(reply, status, body);
}

function registerRestLookup<TResult, TVariables extends Record<string, unknown>>(
  app: FastifyInstance,
  schema: GraphQLSchema,
  lookup: RestLookup<TResult, TVariables>,
  newContext: (client: string) => GraphQLContext,
  logFailure: FailureLog,
  limits: RenderLimits,
): void {
  const handle = restLookupHandler(schema, lookup, limits);
  app.get(lookup.path, async (request, reply) => {
    const response = await handle(request.query, newContext(request.ip));
    if (response.failure) logFailure(request.log, response.failure, 'lookup failed');
    if (response.validators) {
      reply.headers(validatorHeaders(response.validators));
      if (notModified(request.headers, response.validators)) return sendNotModified(reply);
    }
    return send(reply, response);
  });
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (a URL over 16 KiB, a malformed
 * request line) still get the JSON error shape.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'request_too_large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'bad_request';
  socket.end(rawErrorResponse(code));
}

/** The HTTP service: the two REST lookups, /graphql, health probes, JSON errors for everything else. */
export function buildApp({ store, fill, config, logger, nip05 }: AppDependencies): FastifyInstance {
  const limits = config.http?.limits ?? DEFAULT_HTTP_LIMITS;
  const app = Fastify({
    // Timeouts and caps: limitConnections (connection-limits.ts) sets them on the server; here only
    // what Node takes at creation (how often requestTimeout is checked) and the idle socket's life.
    connectionTimeout: SOCKET_INACTIVITY_MS,
    // requireHostHeader: off, so a request without Host gets our answer, not Node's empty 400.
    http: { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS, requireHostHeader: false },
    // Requests during shutdown get our 503 (closeConnectionsOnShutdown), not Fastify's own body.
    return503OnClosing: false,
    loggerInstance: logger as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by one of ours (onResponse below).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    // Trust a caller's request id only if it is short and plain, and not a secret key (it is echoed
    // and logged); otherwise make one.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) && !containsSecretKey(given) ? given : randomUUID();
    },
    clientErrorHandler: answerClientError,
    // A URL Fastify cannot decode (`/%`) would get Fastify's own body, which echoes the input.
    frameworkErrors: (error, request, reply) => {
      request.log.info({ err: error }, 'bad request');
      return send(reply.header('access-control-allow-origin', '*'), errorResponse('bad_request'));
    },
  });
  const newContext = (client: string) =>
    createContext({ store, fill, limits: config.lookup, client, maxObjects: config.graphql.maxCost, ...(nip05 ? { nip05 } : {}) });
  // First of the hooks, so that every answer has them, those of the limits below included.
  // (Callback-style hooks: an async hook costs a promise per request.)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('access-control-allow-origin', '*');
    done();
  });
  limitConnections(app.server, limits);
  closeConnectionsOnShutdown(app);
  limitRequestsPerConnection(app, limits.maxRequestsPerConnection);
  registerRequestLog(app, logger);
  // Metrics are on unless METRICS=false; with METRICS_PORT, /metrics is served there (service.ts).
  const metricsConfig = config.metrics ?? { enabled: true };
  if (metricsConfig.enabled) {
    registerRequestMetrics(app);
    if (metricsConfig.port === undefined) registerMetricsRoute(app);
  }

  const logFailure = createFailureLog();
  const renderLimits = { maxResponseBytes: config.graphql.maxResponseBytes };
  registerRestLookup(app, schema, userProfileLookup, newContext, logFailure, renderLimits);
  registerRestLookup(app, schema, eventLookup, newContext, logFailure, renderLimits);

  registerHealthRoutes(app, store);

  const yoga = createLookupYoga({
    schema,
    config: config.graphql,
    limits: config.lookup,
    logger,
    logFailure,
    createContext: newContext,
  });
  const prepared = new PreparedOperations({ schema, logger, limits: config.lookup, config: config.graphql });
  registerGraphqlRoute(app, yoga, createDirectGraphql({ yoga, logger, logFailure, prepared, createContext: newContext }));

  const restPaths = new Set([userProfileLookup.path, eventLookup.path]);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (!restPaths.has(path)) return send(reply, errorResponse('route_not_found'));
    // A CORS preflight is answered; any other method than GET/HEAD on a REST route is 405 (DESIGN §1).
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      return reply
        .status(204)
        .header('access-control-allow-methods', REST_ALLOW)
        // Not the requested headers echoed back: a response never repeats what a client sent.
        .header('access-control-allow-headers', '*')
        .header('access-control-max-age', '86400')
        .send();
    }
    return send(reply.header('allow', REST_ALLOW), errorResponse('method_not_allowed'));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Framework-level failures (a malformed URL…) still answer in the error shape, from the table.
    if ((error.statusCode ?? 500) < 500) {
      request.log.info({ err: error }, 'bad request');
      return send(reply, errorResponse('bad_request'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, errorResponse('internal_error'));
  });

  return app;
}
