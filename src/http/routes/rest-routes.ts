import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { GraphQLContext } from '../../schema/context.js';
import { notModified, validatorHeaders } from '../conditional.js';
import type { FailureLog } from '../failure-log.js';
import { sendJson, sendNotModified } from '../reply.js';
import type { RestResponse } from '../rest-response.js';
import { DOCUMENTATION_ONLY, EVENT_SCHEMA, FEED_SCHEMA, NOTIFICATIONS_SCHEMA, SEARCH_SCHEMA, THREAD_SCHEMA, USER_PROFILE_SCHEMA } from '../openapi/schemas.js';
import { eventLookup } from './event.js';
import type { AnswerCache } from '../../store/answer-cache.js';
import type { ReadReceipt } from '../../store/read-receipt.js';
import { type KeptAnswer, type RenderLimits, type RestLookup, restLookupHandler } from './rest-lookup.js';
import { feedLookup } from './feed.js';
import { notificationsLookup } from './notifications.js';
import { threadLookup } from './thread.js';
import { searchLookup } from './search.js';
import { userProfileLookup } from './user-profile.js';

/** The REST lookups, in the order the README lists them. */
export const REST_LOOKUPS = [userProfileLookup, eventLookup, threadLookup, feedLookup, notificationsLookup, searchLookup] as const;
/** What a REST route answers besides OPTIONS (DESIGN §1); anything else is 405. */
export const REST_ALLOW = 'GET, HEAD';

/** A REST answer: its status and body, and Retry-After where a limit says when. */
export function sendRest(reply: FastifyReply, { status, body, retryAfterSeconds }: RestResponse): FastifyReply {
  return sendJson(reply, status, body, retryAfterSeconds);
}

export interface RestRoutesOptions {
  schema: GraphQLSchema;
  newContext(client: string, reads?: ReadReceipt): GraphQLContext;
  logFailure: FailureLog;
  limits: RenderLimits;
  /** Answers kept while what they were made of holds (the hot cache's: store/answer-cache.ts); absent: every lookup runs. */
  answers?: AnswerCache<KeptAnswer>;
}

/**
 * GET (and HEAD) /user-profile and /event, as a Fastify plugin: each runs its fixed GraphQL
 * operation, or serves the answer it kept (rest-lookup.ts), answers a 200 with its validators, or
 * 304 when the client's copy is current (conditional.ts).
 */
export const restRoutes: FastifyPluginCallback<RestRoutesOptions> = (app, { schema, newContext, logFailure, limits, answers }, done) => {
  const register = <TResult, TVariables extends Record<string, unknown>>(lookup: RestLookup<TResult, TVariables>, documented: object) => {
    const handle = restLookupHandler(schema, lookup, limits, answers);
    // The query string as the route reads it (one description per parameter, rest-lookup.ts).
    const querystring = {
      type: 'object',
      required: lookup.parameters.filter(({ required }) => required).map(({ name }) => name),
      properties: Object.fromEntries(
        lookup.parameters.map(({ name, description, examples }) => [name, { type: 'string', description, ...(examples ? { examples } : {}) }]),
      ),
    };
    app.get(lookup.path, { schema: { ...documented, querystring }, ...DOCUMENTATION_ONLY }, async (request, reply) => {
      const response = await handle(request.query, (reads) => {
        const context = newContext(request.ip, reads);
        // REST leaves out of /event's map the profiles past MAX_RESPONSE_BYTES: reading stops there.
        context.budget.overRead = 'stop';
        return context;
      });
      if (response.failure) logFailure(request.log, response.failure, 'lookup failed');
      if (response.validators) {
        reply.headers(validatorHeaders(response.validators));
        if (notModified(request.headers, response.validators)) return sendNotModified(reply);
      }
      return sendRest(reply, response);
    });
  };
  register(userProfileLookup, USER_PROFILE_SCHEMA);
  register(eventLookup, EVENT_SCHEMA);
  register(threadLookup, THREAD_SCHEMA);
  register(feedLookup, FEED_SCHEMA);
  register(notificationsLookup, NOTIFICATIONS_SCHEMA);
  register(searchLookup, SEARCH_SCHEMA);
  done();
};
