import type { FastifyInstance } from 'fastify';
import { createRequestLog, type Logger, type RequestLog } from '../logger.js';

/**
 * One log line per request, at info (Fastify's own two are off): id, method, URL, status, time.
 * Secret keys in the URL are redacted like every other log line; lines still pending at close are
 * written before the process exits. Returns the log, for requests answered before Fastify (fast-lane.ts).
 */
export function registerRequestLog(app: FastifyInstance, logger: Logger): RequestLog {
  const logRequest = createRequestLog(logger);
  // Callback-style hooks: an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    logRequest({
      reqId: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
    });
    done();
  });
  app.addHook('onClose', (_app, done) => {
    logRequest.flush();
    done();
  });
  return logRequest;
}
