import type { FastifyReply } from 'fastify';
import { type ErrorCode, errorBody, ERRORS, graphqlErrorBody } from '../errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The cache policy, in one place (docs/api.md, "HTTP caching"): a success may be cached for a minute (a
 * profile can change; an event cannot, but its profiles map can) and revalidated with its ETag; a
 * 404 only very briefly (the event may arrive at a relay); failures not at all.
 */
export function cacheControlFor(status: number): string {
  return status === 200 || status === 304 ? 'public, max-age=60' : status === 404 ? 'public, max-age=10' : 'no-store';
}

/**
 * The one place that writes a JSON answer's status and headers (and the fast lane, fast-lane.ts,
 * writes a kept answer's from the same pieces): the content type, the cache policy
 * and, for answers that say "try again shortly" (429, 503), `Retry-After`: what a limit said
 * (`retryAfterSeconds`, rate_limited), else one second.
 */
export function sendJson(reply: FastifyReply, status: number, body: string | Buffer, retryAfterSeconds?: number): FastifyReply {
  if (status === 429 || status === 503) reply.header('retry-after', String(retryAfterSeconds ?? 1));
  return reply.status(status).header('content-type', JSON_TYPE).header('cache-control', cacheControlFor(status)).send(body);
}

/** 304 Not Modified: the validators (set by the caller) and the cache policy, no body. */
export function sendNotModified(reply: FastifyReply): FastifyReply {
  return reply.status(304).header('cache-control', cacheControlFor(304)).send();
}

/** An error from the table, in the REST shape or, on /graphql, in the GraphQL shape. */
export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  { graphql = false, message, retryAfterSeconds }: { graphql?: boolean; message?: string; retryAfterSeconds?: number } = {},
): FastifyReply {
  const body = graphql ? graphqlErrorBody(code, message) : errorBody(code, message);
  return sendJson(reply, ERRORS[code].status, JSON.stringify(body), retryAfterSeconds);
}
