import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginCallback, LogController } from 'fastify';
import { DOCUMENTATION_ONLY, METRICS_SCHEMA } from '../openapi/schemas.js';
import { NOT_RATE_LIMITED } from '../rate-limits.js';
import type { Logger } from '../../logger.js';
import { metrics, registry } from '../../metrics/metrics.js';

/**
 * GET /metrics: the process's metrics in the Prometheus text format (src/metrics/metrics.ts). Not
 * cached; open like every route here (it names no client, id or pubkey). METRICS=false leaves it
 * out, METRICS_PORT serves it on a port of its own instead (startMetricsServer).
 */
export const metricsRoutes: FastifyPluginCallback = (app, _options, done) => {
  // Formatting every series costs far more than a lookup, and /metrics is not rate limited: a
  // scrape's text is kept for a second (scrapers ask every few seconds at most).
  let cached: { at: number; text: Promise<string> } | undefined;
  app.get('/metrics', { ...NOT_RATE_LIMITED, schema: METRICS_SCHEMA, ...DOCUMENTATION_ONLY }, async (_request, reply) => {
    if (!cached || Date.now() - cached.at >= 1000) cached = { at: Date.now(), text: registry.metrics() };
    const text = await cached.text;
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  });
  done();
};

/**
 * Counts every answered request by route pattern (never the URL: ids are in it), method and status,
 * and its duration. Requests that match no route count as `unmatched`.
 */
export function registerRequestMetrics(app: FastifyInstance): void {
  // Callback-style hook: an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** /metrics alone on METRICS_PORT (for `serve` and for `sync`, which has no other port). */
export async function startMetricsServer(host: string, port: number, logger: Logger): Promise<MetricsServer> {
  // Through logController: the top-level disableRequestLogging is deprecated (FSTDEP023).
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  await app.register(metricsRoutes);
  await app.listen({ host, port });
  const address = app.server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  logger.info({ port: bound }, 'metrics served at /metrics');
  return { port: bound, close: () => app.close() };
}
