import type { FastifyReply } from 'fastify';
import { type ErrorCode, errorBody, ERRORS, graphqlErrorBody } from '../errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The one place that writes a JSON answer's status and headers: the content type, the cache policy
 * (successes may be cached briefly, a profile can change; a 404 only very briefly; failures not at
 * all) and, for answers that say "try again shortly" (429, 503), `Retry-After`.
 */
export function sendJson(reply: FastifyReply, status: number, body: string | Buffer): FastifyReply {
  const cacheControl = status === 200 ? 'public, max-age=60' : status === 404 ? 'public, max-age=10' : 'no-store';
  if (status === 429 || status === 503) reply.header('retry-after', '1');
  return reply.status(status).header('content-type', JSON_TYPE).header('cache-control', cacheControl).send(body);
}

/** An error from the table, in the REST shape or, on /graphql, in the GraphQL shape. */
export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  { graphql = false, message }: { graphql?: boolean; message?: string } = {},
): FastifyReply {
  const body = graphql ? graphqlErrorBody(code, message) : errorBody(code, message);
  return sendJson(reply, ERRORS[code].status, JSON.stringify(body));
}
