import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { type Config, DEFAULT_HTTP_LIMITS, type HttpLimits, type MetricsConfig, type RateLimitConfig } from '../config/env.js';
import { type ErrorCode, LookupError } from '../errors.js';
import type { ReadThrough } from '../fill/read-through.js';
import type { Nip05 } from '../nip05/nip05.js';
import type { ZapProviders } from '../zaps/zap-providers.js';
import type { Logger } from '../logger.js';
import { containsSecretKey } from '../nostr/secret-keys.js';
import { createContext } from '../schema/context.js';
import { schema } from '../schema/index.js';
import type { EventStore } from '../store/event-store.js';
import { RedisEventStore } from '../store/redis/redis-event-store.js';
import {
  CONNECTIONS_CHECKING_INTERVAL_MS,
  closeConnectionsOnShutdown,
  limitConnections,
  limitRequestsPerConnection,
  rawErrorResponse,
  SOCKET_INACTIVITY_MS,
} from './connection-limits.js';
import cors from '@fastify/cors';
import { createFailureLog } from './failure-log.js';
import { clientAddressReader, createFastLane, type FastLane } from './fast-lane.js';
import { createLookupYoga, GRAPHQL_ENDPOINT } from './graphql/create-yoga.js';
import { createDirectGraphql, type KeptGraphqlAnswer } from './graphql/direct-execution.js';
import { registerGraphqlRoute } from './graphql/graphql-route.js';
import { PreparedOperations } from './graphql/prepared-operations.js';
import { registerRateLimits } from './rate-limits.js';
import { sendError } from './reply.js';
import { registerRequestLog } from './request-log.js';
import { errorResponse } from './rest-response.js';
import { registerDocs } from './routes/docs.js';
import { homeRoute } from './routes/home.js';
import { summarizeIndex } from '../store/index-summary.js';
import { healthRoutes } from './routes/health.js';
import { StoreOutage } from './store-outage.js';
import { PACKAGE_VERSION } from '../version.js';
import { metricsRoutes, registerRequestMetrics } from './routes/metrics.js';
import { metrics } from '../metrics/metrics.js';
import { REST_ALLOW, REST_LOOKUPS, restRoutes, sendRest } from './routes/rest-routes.js';
import type { KeptAnswer } from './routes/rest-lookup.js';
import { eventLookup } from './routes/event.js';
import { userProfileLookup } from './routes/user-profile.js';
import type { ReadReceipt } from '../store/read-receipt.js';

export interface AppDependencies {
  store: EventStore;
  /** Fetch on miss from relays; without it the index alone answers (RELAYS empty). */
  fill?: ReadThrough;
  config: Pick<Config, 'lookup' | 'graphql'> & { http?: { limits: HttpLimits; landing?: boolean }; metrics?: MetricsConfig; rateLimits?: RateLimitConfig };
  logger: Logger;
  /** NIP-05 names as input and verification; without it, names answer nip05_unresolvable. */
  nip05?: Nip05;
  /** Zap recipients' provider checks; without them, only answers already held are used. */
  zaps?: ZapProviders;
}

const REQUEST_ID = /^[\w.:-]{1,64}$/;

/**
 * A request's id: the caller's X-Request-Id if it is short and plain, and not a secret key (it is
 * echoed and logged); otherwise a new one.
 */
function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) && !containsSecretKey(given) ? given : randomUUID();
}

/** What a browser script may read of an answer besides the simple headers (CORS). */
const EXPOSED_HEADERS = ['etag', 'last-modified', 'retry-after', 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

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
export function buildApp({ store, fill, config, logger, nip05, zaps }: AppDependencies): FastifyInstance {
  const limits = config.http?.limits ?? DEFAULT_HTTP_LIMITS;
  // Kept answers are served ahead of Fastify (fast-lane.ts), once the routes and limits are in place below.
  let fastLane: FastLane | undefined;
  // How full the index is, for /metrics (read from kept counters when scraped).
  if (config.metrics?.enabled !== false) metrics.followIndex(() => summarizeIndex(store));
  const app = Fastify({
    // Timeouts and caps: limitConnections (connection-limits.ts) sets them on the server; here only
    // what Node takes at creation (how often requestTimeout is checked) and the idle socket's life.
    connectionTimeout: SOCKET_INACTIVITY_MS,
    // requireHostHeader: off, so a request without Host gets our answer, not Node's empty 400.
    http: { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS, requireHostHeader: false },
    // Requests during shutdown get our 503 (closeConnectionsOnShutdown), not Fastify's own body.
    return503OnClosing: false,
    loggerInstance: logger as FastifyBaseLogger,
    // TRUST_PROXY: whether X-Forwarded-For decides request.ip (rate limits and per-client caps).
    trustProxy: (config.rateLimits?.trustProxy ?? false) as FastifyServerOptions['trustProxy'],
    // Fastify's two lines per request are replaced by one of ours (onResponse below).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (request) => requestIdOf(request.headers),
    clientErrorHandler: answerClientError,
    // The server Fastify would make (lib/server.js: the `http` options, connectionTimeout above;
    // limitConnections sets the rest), with the fast lane in front. With a factory Fastify listens
    // on one address: HOST=localhost no longer adds the name's other addresses (docs/configuration.md).
    serverFactory: (handler, options) => {
      const server = createServer(options.http ?? {}, (request, response) => {
        if (!fastLane?.(request, response, handler)) handler(request, response);
      });
      server.setTimeout(SOCKET_INACTIVITY_MS);
      return server;
    },
    // A URL Fastify cannot decode (`/%`) would get Fastify's own body, which echoes the input.
    frameworkErrors: (error, request, reply) => {
      request.log.info({ err: error }, 'bad request');
      return sendRest(reply.header('access-control-allow-origin', '*'), errorResponse('bad_request'));
    },
  });
  // Rate limits first: the plugin's hook must see every route registered after it.
  const shared = store instanceof RedisEventStore ? { client: store.client, keyPrefix: store.keyPrefix } : undefined;
  const { missLimit, takeRequest } = registerRateLimits(app, config.rateLimits ?? { trustProxy: false }, shared, logger);
  // The document collects the routes registered after it.
  registerDocs(app, {
    lookup: config.lookup,
    maxResponseBytes: config.graphql.maxResponseBytes,
    ...(config.rateLimits ? { rateLimits: config.rateLimits } : {}),
    version: PACKAGE_VERSION,
  });
  const newContext = (client: string, reads?: ReadReceipt) => {
    const misses = missLimit();
    return createContext({
      ...(reads ? { reads } : {}),
      store,
      fill,
      limits: config.lookup,
      client,
      maxObjects: config.graphql.maxCost,
      maxResponseBytes: config.graphql.maxResponseBytes,
      ...(nip05 ? { nip05 } : {}),
      ...(zaps ? { zaps } : {}),
      ...(misses ? { missLimit: misses } : {}),
    });
  };
  // First of the hooks, so that every answer has them, those of the limits below included.
  // (Callback-style hooks: an async hook costs a promise per request.) A header added to every
  // answer here or by a hook below must be added by the fast lane too (fast-lane.ts).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // CORS (DESIGN §1): open to every origin, never with credentials, never an echo of what the
  // request sent (no Origin reflected, `*` for headers). Any OPTIONS is answered as a preflight
  // (204): OPTIONS asks what the resource allows (RFC 9110 §9.3.7). Methods per route:
  // REST here, /graphql in its route's config (graphql-route.ts).
  void app.register(cors, {
    origin: '*',
    credentials: false,
    methods: REST_ALLOW,
    allowedHeaders: '*',
    maxAge: 86_400,
    strictPreflight: false,
    // What a browser script may read besides the simple headers.
    exposedHeaders: EXPOSED_HEADERS,
  });
  limitConnections(app.server, limits);
  const shutdown = closeConnectionsOnShutdown(app);
  const connections = limitRequestsPerConnection(app, limits.maxRequestsPerConnection);
  const logRequest = registerRequestLog(app, logger);
  // Metrics are on unless METRICS=false; with METRICS_PORT, /metrics is served there (service.ts).
  const metricsConfig = config.metrics ?? { enabled: true };
  if (metricsConfig.enabled) {
    registerRequestMetrics(app);
    if (metricsConfig.port === undefined) void app.register(metricsRoutes);
  }

  const outage = new StoreOutage(store, logger);
  app.addHook('onClose', (_app, done) => {
    outage.close();
    done();
  });
  const logFailure = createFailureLog(undefined, outage);
  const answers = store.answerCache?.<KeptAnswer>();
  const graphqlAnswers = store.answerCache?.<KeptGraphqlAnswer>();
  if (answers) {
    fastLane = createFastLane({
      // The routes whose answers are kept (the screens' never are: each is made of many things).
      routes: [userProfileLookup, eventLookup],
      answers,
      ...(graphqlAnswers ? { graphql: { path: GRAPHQL_ENDPOINT, answers: graphqlAnswers } } : {}),
      gates: {
        shutdown,
        connections,
        ...(takeRequest ? { takeRequest } : {}),
        clientAddress: clientAddressReader(config.rateLimits?.trustProxy ?? false),
      },
      requestId: requestIdOf,
      // What @fastify/cors adds to a GET's answer with `origin: '*'` (test/fast-lane.test.ts checks).
      corsHeaders: { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS.join(', ') },
      logRequest,
      logger,
      ...(metricsConfig.enabled ? { countRequest: (route, method, status, seconds) => metrics.httpRequest(route, method, status, seconds) } : {}),
    });
  }
  void app.register(restRoutes, {
    schema,
    newContext,
    logFailure,
    limits: { maxResponseBytes: config.graphql.maxResponseBytes, maxCost: config.graphql.maxCost, lookup: config.lookup },
    ...(answers ? { answers } : {}),
  });
  void app.register(healthRoutes, { store, outage });
  if (config.http?.landing !== false) void app.register(homeRoute, { store });

  const yoga = createLookupYoga({
    schema,
    config: config.graphql,
    limits: config.lookup,
    logger,
    logFailure,
    createContext: newContext,
  });
  const prepared = new PreparedOperations({ schema, logger, limits: config.lookup, config: config.graphql });
  registerGraphqlRoute(app, yoga, createDirectGraphql({ yoga, logger, logFailure, prepared, createContext: newContext, ...(graphqlAnswers ? { answers: graphqlAnswers } : {}) }));

  const restPaths = new Set<string>(REST_LOOKUPS.map((lookup) => lookup.path));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (!restPaths.has(path)) return sendRest(reply, errorResponse('route_not_found'));
    // Any other method than GET/HEAD (OPTIONS is @fastify/cors') on a REST route is 405 (DESIGN §1).
    return sendRest(reply.header('allow', REST_ALLOW), errorResponse('method_not_allowed'));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A table error thrown by a hook (rate_limited, from the rate-limit plugin): its own answer.
    if (error instanceof LookupError) {
      if (request.url.startsWith('/graphql')) {
        return sendError(reply, error.code, { graphql: true, ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}) });
      }
      return sendRest(reply, errorResponse(error.code, error));
    }
    // Framework-level failures (a malformed URL…) still answer in the error shape, from the table.
    if ((error.statusCode ?? 500) < 500) {
      request.log.info({ err: error }, 'bad request');
      return sendRest(reply, errorResponse('bad_request'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendRest(reply, errorResponse('internal_error'));
  });

  return app;
}
