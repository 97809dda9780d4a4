import type { FastifyInstance, FastifyReply } from 'fastify';
import { type ErrorCode, ERRORS, graphqlErrorBody } from '../../errors.js';
import type { LookupYoga } from './create-yoga.js';

const JSON_TYPE = 'application/json; charset=utf-8';

function sendGraphqlError(reply: FastifyReply, code: ErrorCode): FastifyReply {
  return reply
    .status(ERRORS[code].status)
    .header('content-type', JSON_TYPE)
    .header('cache-control', 'no-store')
    .send(JSON.stringify(graphqlErrorBody(code)));
}

/**
 * /graphql: GraphQL over HTTP (GET and POST) by graphql-yoga, inside Fastify. CORS is ours (open `*`,
 * no credentials, DESIGN §1), and the cases yoga would answer badly are answered here in the
 * GraphQL error shape with a code from the table: an absolute request target (yoga: 500) and a
 * browser's `accept: text/html` while GraphiQL is off (yoga: 406 with the body `null`). Malformed
 * JSON parameters are answered inside yoga (use-request-parse-errors.ts).
 */
export function registerGraphqlRoute(app: FastifyInstance, yoga: LookupYoga): void {
  app.register(async (graphqlScope) => {
    // yoga reads and parses request bodies itself, as GraphQL over HTTP prescribes.
    graphqlScope.removeAllContentTypeParsers();
    graphqlScope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    graphqlScope.route({
      url: yoga.graphqlEndpoint,
      method: ['GET', 'POST', 'OPTIONS'],
      handler: async (request, reply) => {
        if (request.method === 'OPTIONS') {
          return reply
            .status(204)
            .header('access-control-allow-methods', 'GET, POST')
            .header('access-control-allow-headers', '*')
            .header('access-control-max-age', '86400')
            .send();
        }
        // An absolute URL as the request target (`GET http://host/graphql`) is valid HTTP that yoga
        // cannot parse (500); GraphQL over HTTP needs only the path.
        if (!request.raw.url?.startsWith('/')) return sendGraphqlError(reply, 'bad_request');
        const response = await yoga.handleNodeRequestAndResponse(request, reply, { req: request, reply });
        if (response.status === 406) return sendGraphqlError(reply, 'not_acceptable');
        response.headers.forEach((value, key) => {
          reply.header(key, value);
        });
        reply.status(response.status);
        return reply.send(response.body);
      },
    });
  });
}
