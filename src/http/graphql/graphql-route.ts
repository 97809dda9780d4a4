import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../errors.js';
import { sendError } from '../reply.js';
import type { LookupYoga } from './create-yoga.js';
import { graphiqlAnswer } from './graphiql.js';
import type { DirectGraphql } from './direct-execution.js';
import { preReadBody } from '../fast-lane.js';

/**
 * The largest POST body /graphql reads. yoga reads bodies itself, past Fastify's limit; a GraphQL
 * request is a few KB (graphql-armor allows 2,000 tokens, MAX_LIST_LENGTH ids of ~70 bytes).
 */
export const GRAPHQL_MAX_BODY_BYTES = 128 * 1024;
/** What yoga answers with no body, in the error shape. */
const EMPTY_ANSWERS: Partial<Record<number, ErrorCode>> = {
  405: 'method_not_allowed',
  406: 'not_acceptable',
  415: 'unsupported_media_type',
};

function sendGraphqlError(reply: FastifyReply, code: ErrorCode, message?: string): FastifyReply {
  return sendError(reply, code, { graphql: true, message });
}

/**
 * /graphql: GraphQL over HTTP (GET and POST) by graphql-yoga, inside Fastify. CORS is @fastify/cors' (open `*`,
 * no credentials, DESIGN §1), and the cases yoga would answer badly are answered here in the
 * GraphQL error shape with a code from the table: an absolute request target (yoga: 500), a
 * browser's `accept: text/html` while GraphiQL is off, a content type it does not read (yoga: 406
 * and 415 with the body `null`), other methods (405, not 404), and POST bodies over
 * GRAPHQL_MAX_BODY_BYTES or of unknown length (yoga would read any size). Requests that do not
 * parse are answered inside yoga (use-request-parse-errors.ts).
 */
export function registerGraphqlRoute(app: FastifyInstance, yoga: LookupYoga, direct?: DirectGraphql): void {
  app.register(async (graphqlScope) => {
    // yoga reads and parses request bodies itself, as GraphQL over HTTP prescribes.
    graphqlScope.removeAllContentTypeParsers();
    graphqlScope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    graphqlScope.route({
      url: yoga.graphqlEndpoint,
      method: ['GET', 'POST', 'OPTIONS', 'PUT', 'PATCH', 'DELETE'],
      // GraphQL describes itself (introspection, GraphiQL); /openapi.json names it in its description.
      schema: { hide: true },
      // Preflights are answered by @fastify/cors (app.ts), with this route's methods.
      config: { cors: { methods: 'GET, POST' } },
      handler: async (request, reply) => {
        // (OPTIONS never gets here: @fastify/cors answers it.)
        if (!['GET', 'HEAD', 'POST'].includes(request.method)) {
          return sendGraphqlError(reply.header('allow', 'GET, POST'), 'method_not_allowed', '/graphql answers GET and POST only.');
        }
        // An absolute URL as the request target (`GET http://host/graphql`) is valid HTTP that yoga
        // cannot parse (500); GraphQL over HTTP needs only the path.
        if (!request.raw.url?.startsWith('/')) return sendGraphqlError(reply, 'bad_request');
        if (request.method === 'POST') {
          // Read by yoga in full before anything checks it: the size is known first, or refused.
          const length = request.headers['content-length'];
          if (length === undefined) return sendGraphqlError(reply, 'length_required');
          if (Number(length) > GRAPHQL_MAX_BODY_BYTES) return sendGraphqlError(reply, 'body_too_large');
        }
        // The common request, a JSON POST, runs on the envelop pipeline directly (direct-execution.ts);
        // what it leaves, and everything else, is yoga's.
        let response: Response;
        if (request.method === 'POST' && direct) {
          const body = await readBody(request);
          if (body === undefined) return sendGraphqlError(reply, 'body_too_large');
          if (await direct.answer(request, reply, body)) return reply;
          response = await yoga.fetch(`http://localhost${request.raw.url}`, { method: 'POST', headers: headersOf(request), body: new Uint8Array(body) }, { req: request, reply });
        } else {
          response = await yoga.handleNodeRequestAndResponse(request, reply, { req: request, reply });
        }
        // GraphiQL's page (9 MB): sent compressed and revalidated by its ETag (graphiql.ts).
        if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/html')) {
          const answer = await graphiqlAnswer(request.headers as { 'accept-encoding'?: string; 'if-none-match'?: string });
          if (answer) {
            await response.body?.cancel();
            return reply.status(answer.status).headers(answer.headers).send(answer.body);
          }
        }
        const empty = response.status >= 400 && response.body === null ? EMPTY_ANSWERS[response.status] : undefined;
        if (empty) return sendGraphqlError(reply, empty);
        response.headers.forEach((value, key) => {
          reply.header(key, value);
        });
        reply.status(response.status);
        return reply.send(response.body);
      },
    });
  });
}

/** The body of a POST whose length was checked (at most GRAPHQL_MAX_BODY_BYTES), or undefined past it. */
function readBody(request: FastifyRequest): Promise<Buffer | undefined> {
  // Read already by the fast lane, which found no kept answer for it.
  const read = preReadBody(request.raw);
  if (read !== undefined) return Promise.resolve(read);
  // 'data' events rather than an async iterator: a request body is one or two chunks, and the
  // iterator's machinery cost more than reading them.
  return new Promise((resolve, reject) => {
    const raw = request.raw;
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      // Content-Length was checked; a client sending more than it said is cut off.
      if (size > GRAPHQL_MAX_BODY_BYTES) {
        raw.off('data', onData);
        raw.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    raw.on('data', onData);
    raw.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    raw.once('error', reject);
    // A client gone before the end: 'close' without 'end'. ('close' follows every request: an
    // Error, with its stack, is made only when it means something.)
    raw.once('close', () => {
      if (!ended) reject(new Error('aborted'));
    });
  });
}

/** The request's headers for a Fetch API request, repeated ones kept. */
function headersOf(request: FastifyRequest): Headers {
  const headers = new Headers();
  const raw = request.raw.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
  return headers;
}
