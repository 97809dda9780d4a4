import type { FastifyPluginCallback } from 'fastify';
import { DOCUMENTATION_ONLY, HEALTHZ_SCHEMA, READYZ_SCHEMA } from '../openapi/schemas.js';
import { NOT_RATE_LIMITED } from '../rate-limits.js';
import { LookupError } from '../../errors.js';
import { type EventStore, StoreUnavailableError } from '../../store/event-store.js';
import { createFailureLog } from '../failure-log.js';
import { JSON_TYPE } from '../reply.js';
import type { StoreOutage } from '../store-outage.js';

/**
 * Liveness and readiness for orchestrators: /healthz is 200 while the process serves; /readyz is 200
 * only while the store answers (503 otherwise), so a load balancer stops sending traffic to an
 * instance that has lost Redis.
 */
export const healthRoutes: FastifyPluginCallback<{ store: EventStore; outage: StoreOutage }> = (app, { store, outage }, done) => {
  // A probe every few seconds through an outage: one line a second at most, no stack for a known
  // store state; the outage itself is said once, by StoreOutage.
  const notReady = createFailureLog(undefined, outage);
  app.get('/healthz', { ...NOT_RATE_LIMITED, schema: HEALTHZ_SCHEMA, ...DOCUMENTATION_ONLY }, async (_request, reply) =>
    reply
      .header('content-type', JSON_TYPE)
      .header('cache-control', 'no-store')
      .send('{"status":"ok"}'),
  );
  app.get('/readyz', { ...NOT_RATE_LIMITED, schema: READYZ_SCHEMA, ...DOCUMENTATION_ONLY }, async (request, reply) => {
    reply.header('content-type', JSON_TYPE).header('cache-control', 'no-store');
    try {
      await store.ping();
      outage.answered();
      // Still ready (reads answer), but an operator must know that nothing new is being stored.
      if (store.writesFailing()) return reply.send('{"status":"ready","writes":"failing"}');
      return reply.send('{"status":"ready"}');
    } catch (error) {
      const failure = error instanceof StoreUnavailableError ? new LookupError('store_unavailable', { cause: error }) : error;
      notReady({ error: (fields, message) => request.log.warn(fields, message) }, failure, 'store not ready');
      return reply.status(503).send('{"status":"unavailable"}');
    }
  });
  done();
};
